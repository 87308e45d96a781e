import PackagePlugin
@main struct GenerateCode: CommandPlugin { func performCommand(context: PluginContext, arguments: [String]) async throws {} }
