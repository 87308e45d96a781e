import SkiffLoad

// The thin executable over SkiffLoad: `skiff-load [run] <scenario> …` or `skiff-load compare A.json B.json`.
await SkiffLoadCommand.start()
