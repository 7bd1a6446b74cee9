from commchar.cli import main

raise SystemExit(main())
