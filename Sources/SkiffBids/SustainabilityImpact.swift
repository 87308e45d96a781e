import SkiffDomain

/// The estimated environmental benefit of buying an item second-hand rather than new: the figures of
/// ``SkiffDomain/SustainabilityFigures`` (their table and sources) for a listing's category.
public struct SustainabilityImpact: Hashable, Sendable {
    /// Greenhouse gas emissions avoided, in grams of CO2 equivalent.
    public var co2eGramsSaved: Int64
    /// Water not used, in litres.
    public var waterLitersSaved: Int64
    /// The category the estimate is for.
    public var category: ItemCategory

    /// Creates an estimate.
    public init(co2eGramsSaved: Int64, waterLitersSaved: Int64, category: ItemCategory) {
        self.co2eGramsSaved = co2eGramsSaved
        self.waterLitersSaved = waterLitersSaved
        self.category = category
    }

    /// The estimate for an item of `category` (see ``SkiffDomain/SustainabilityFigures``).
    public static func estimate(for category: ItemCategory) -> SustainabilityImpact {
        let figures = SustainabilityFigures.estimate(category: category.rawValue)
        return SustainabilityImpact(
            co2eGramsSaved: figures.co2eGramsSaved,
            waterLitersSaved: figures.waterLitersSaved,
            category: category
        )
    }

    /// A sentence to show the buyer (see ``SkiffDomain/SustainabilityFigures/explanation(title:)``).
    public func explanation(title: String) -> String {
        SustainabilityFigures(co2eGramsSaved: co2eGramsSaved, waterLitersSaved: waterLitersSaved)
            .explanation(title: title)
    }
}
