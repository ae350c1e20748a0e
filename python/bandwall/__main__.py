from bandwall.cli import main

main()
