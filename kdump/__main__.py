"""``python -m kdump`` runs the same command line as the ``kdump`` console script."""

from kdump.cli.entry import main

if __name__ == "__main__":
    main()
