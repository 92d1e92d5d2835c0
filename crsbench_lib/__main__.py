import sys

from crsbench_lib.cli import main

sys.exit(main())
