from stsq.cli import main

raise SystemExit(main())
