"""Diagnostics: the code table (``codes``), one problem and its place (``diagnostic``), and the
renderers that print them (``render``). Nothing here decides what is wrong with a model: the
readers, the inference walk and the run loop do, and report through these types."""
