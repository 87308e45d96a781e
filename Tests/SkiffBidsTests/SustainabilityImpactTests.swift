import SkiffBids
import SkiffDomain
import Testing

@Suite("Sustainability impact")
struct SustainabilityImpactTests {
    @Test("Every category has an estimate; tickets save nothing", arguments: ItemCategory.allCases)
    func table(category: ItemCategory) {
        let impact = SustainabilityImpact.estimate(for: category)
        #expect(impact.category == category)
        #expect(impact.co2eGramsSaved >= 0 && impact.waterLitersSaved >= 0)
        #expect((impact.co2eGramsSaved == 0) == (category == .tickets))
    }

    @Test("Explanations round to kilograms and group litres")
    func explanations() {
        #expect(
            SustainabilityImpact.estimate(for: .electronics).explanation(title: "Phone")
                == "Buying “Phone” second-hand saves about 60 kg of CO2e and 12,000 litres of water."
        )
        #expect(
            SustainabilityImpact.estimate(for: .books).explanation(title: "Calculus")
                == "Buying “Calculus” second-hand saves about 2.5 kg of CO2e and 1,000 litres of water."
        )
        #expect(
            SustainabilityImpact.estimate(for: .tickets).explanation(title: "Gig")
                == "Buying “Gig” second-hand puts it to use instead of letting it go to waste."
        )
    }
}

@Suite("Sustainability figures")
struct SustainabilityFiguresTests {
    @Test("Bids' impact is the shared table's, for every category; an unknown category counts as other")
    func sharedTable() {
        for category in ItemCategory.allCases {
            let impact = SustainabilityImpact.estimate(for: category)
            let figures = SustainabilityFigures.estimate(category: category.rawValue)
            #expect(impact.co2eGramsSaved == figures.co2eGramsSaved)
            #expect(impact.waterLitersSaved == figures.waterLitersSaved)
        }
        #expect(
            SustainabilityFigures.estimate(category: "spaceships") == SustainabilityFigures.estimate(category: "other")
        )
    }
}
