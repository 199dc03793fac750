# Bad input and --help for the tools in tools/.
