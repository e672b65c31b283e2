"""The command line: click commands that parse options, call the library and pick a renderer."""
