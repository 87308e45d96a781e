import SkiffCLI

await SkiffMain.main()
