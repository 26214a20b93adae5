"""`python -m cli` runs `mco`."""

from cli.main import main

main()
