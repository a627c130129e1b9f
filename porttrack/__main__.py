from porttrack.cli import main

main()
