/// The estimated environmental benefit of buying an item second-hand rather than new, per marketplace
/// category: the one table behind Bids' sale and bid impacts (skiff.bids.v1.SustainabilityImpact) and
/// Listings' impact on GetListing (skiff.listings.v1.SustainabilityImpact).
///
/// The figures are per *typical item* of a category: the greenhouse gas emissions and the water that
/// making a new one would have used (cradle-to-gate production, the largest part of these items'
/// footprints), on the assumption that a second-hand purchase replaces buying new one-for-one. They
/// are rounded, deliberately conservative estimates for showing a buyer, not measurements.
///
/// | Category | CO2e saved | Water saved | Basis |
/// | --- | --- | --- | --- |
/// | clothing | 20 kg | 2,700 L | a jacket-sized garment; 2,700 L is WWF's figure for one cotton shirt, the low end for garments |
/// | shoes | 14 kg | 4,000 L | MIT (Cheah et al., 2013): 14 kg CO2e for a pair of running shoes; water half of the Water Footprint Network's 8,000 L for leather shoes, for mixed materials |
/// | accessories | 8 kg | 1,500 L | a textile or leather bag, belt or hat; a fraction of a garment's footprint |
/// | electronics | 60 kg | 12,000 L | a smartphone-sized device: manufacturers' product environmental reports put production at 50–80 kg CO2e; Friends of the Earth (2012) about 12,760 L of water |
/// | books | 2.5 kg | 1,000 L | a paperback or textbook: published estimates of 1–4 kg CO2e per book; about 10 L per A4 sheet of paper (Water Footprint Network) for ~100 sheets |
/// | furniture | 45 kg | 2,000 L | a chair or small table: manufacturers' life-cycle assessments of office chairs and small tables report 30–70 kg CO2e; water mostly from wood and textiles |
/// | tickets | 0 | 0 | a resold ticket replaces no production |
/// | other | 5 kg | 500 L | an unknown small item: a deliberately low default |
public struct SustainabilityFigures: Hashable, Sendable {
    /// Greenhouse gas emissions avoided, in grams of CO2 equivalent.
    public var co2eGramsSaved: Int64
    /// Water not used, in litres.
    public var waterLitersSaved: Int64

    /// Creates figures.
    public init(co2eGramsSaved: Int64, waterLitersSaved: Int64) {
        self.co2eGramsSaved = co2eGramsSaved
        self.waterLitersSaved = waterLitersSaved
    }

    /// The figures for a category, by its stored name (`clothing`, `shoes`, `accessories`, `electronics`,
    /// `books`, `furniture`, `tickets`, `other`; anything else counts as `other`). See the table on the type.
    public static func estimate(category: String) -> SustainabilityFigures {
        let (grams, liters): (Int64, Int64) =
            switch category {
            case "clothing": (20_000, 2_700)
            case "shoes": (14_000, 4_000)
            case "accessories": (8_000, 1_500)
            case "electronics": (60_000, 12_000)
            case "books": (2_500, 1_000)
            case "furniture": (45_000, 2_000)
            case "tickets": (0, 0)
            default: (5_000, 500)
            }
        return SustainabilityFigures(co2eGramsSaved: grams, waterLitersSaved: liters)
    }

    /// A sentence to show the buyer, e.g. "Buying “Rain jacket” second-hand saves about 20 kg of CO2e
    /// and 2,700 litres of water."
    public func explanation(title: String) -> String {
        guard co2eGramsSaved > 0 || waterLitersSaved > 0 else {
            return "Buying “\(title)” second-hand puts it to use instead of letting it go to waste."
        }
        return "Buying “\(title)” second-hand saves about \(Self.kilograms(co2eGramsSaved)) kg of CO2e "
            + "and \(Self.grouped(waterLitersSaved)) litres of water."
    }

    /// Grams as kilograms with at most one decimal ("2.5", "20").
    static func kilograms(_ grams: Int64) -> String {
        let tenths = (grams + 50) / 100
        return tenths % 10 == 0 ? grouped(tenths / 10) : "\(grouped(tenths / 10)).\(tenths % 10)"
    }

    /// An integer with comma thousands separators, independent of locale ("12,000").
    static func grouped(_ value: Int64) -> String {
        let digits = Array(String(value.magnitude))
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }
}
