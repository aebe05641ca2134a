from halluscope.cli.main import main

main()
