import ArgumentParser
import QuoteCore

/// The car's flags, shared by `submit` (a new request) and `resolve` (what a pending quote
/// lacked): each one given replaces that field of `car`.
struct CarOptions: ParsableArguments {
    @Option(help: "The car's make.") var make: String?
    @Option(help: "The car's model.") var model: String?
    @Option(help: "The car's model year.") var year: Int?
    @Option(help: "The car's trim.") var trim: String?

    /// `car` with the fields given here replaced; `nil` when it has none at all.
    func applied(to car: Submission.CarInput?) -> Submission.CarInput? {
        var car = car ?? .init()
        car.make = make ?? car.make
        car.model = model ?? car.model
        car.year = year ?? car.year
        car.trim = trim ?? car.trim
        return car == .init() ? nil : car
    }
}
