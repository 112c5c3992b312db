"""Signal processing ops (OpenVINO's spec category \"signals\"): the DFT family, STFT, ISTFT."""
