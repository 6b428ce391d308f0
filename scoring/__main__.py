from scoring.cli import main

raise SystemExit(main())
