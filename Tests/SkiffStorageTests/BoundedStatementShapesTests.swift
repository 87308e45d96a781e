import Testing

@testable import SkiffSQLite

/// The list of per-request SQL texts a database's connections may cache.
@Suite("Bounded statement shapes")
struct BoundedStatementShapesTests {
    @Test("Texts are admitted until the list is full; admitted ones stay admitted, later ones are not")
    func admission() {
        let shapes = BoundedStatementShapes(limit: 3)
        #expect(shapes.admits("SELECT 1"))
        #expect(shapes.admits("SELECT 1"), "the same text, once")
        #expect(shapes.admits("SELECT 2"))
        #expect(shapes.admits("SELECT 3"))
        #expect(!shapes.admits("SELECT 4"), "the list is full")
        #expect(shapes.admits("SELECT 2"), "an admitted text stays admitted")
        #expect(BoundedStatementShapes().limit == BoundedStatementShapes.defaultLimit)
    }
}
