import sys

from irexec.cli.main import main

sys.exit(main())
