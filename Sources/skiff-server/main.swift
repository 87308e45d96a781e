import SkiffServerApp

await ServerCommand.start()
