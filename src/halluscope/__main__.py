from halluscope.cli import main

main()
