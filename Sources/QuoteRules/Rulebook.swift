public import Foundation
public import QuoteCore
public import QuoteStore

/// The use cases of quoted, written once for every store: submit, resolve, book, complete,
/// cancel and repair, each a sequence of calls on a `StoreTransaction`.
///
/// Work is split in two, so that the store only writes:
/// - ``check(_:in:at:by:)``, before any transaction: a submission is validated and priced against
///   a catalog snapshot, a mechanic's name is looked up. An invalid command is refused here.
/// - ``applyBatch(requests:catalog:to:)``, inside one transaction: what needs stored state (the quote's
///   state, who is free, the idempotency key) is read, decided, then written with its events.
///
/// Every command decides before it writes: each refusal (a transition the state machine does
/// not allow, a mechanic who is busy or unable, no one free) comes before the first change,
/// and a claim that fails changes nothing. So a refused command leaves no trace in its batch
/// without a savepoint; the steps that may be refused after a write, booking a submission
/// just recorded and putting a quote in a line found full, run inside one.
public struct Rulebook: Sendable {
    /// Whether a name the batch's catalog does not know is looked up again in the transaction
    /// (``CheckedCommand/recheck(_:refusal:)``) rather than refused at once: on a store other
    /// daemons change too, whose catalog may be newer than this daemon's.
    private let rechecksUnknownNames: Bool
    /// The most quotes the wait-list holds: past it, a booking that would wait is refused as
    /// one that may not wait is. Every step of the line (a place counted, the oldest found
    /// that a mechanic can serve) reads at most this many rows.
    public let maximumWaiting: Int

    /// The wait-list's default bound.
    public static let defaultMaximumWaiting = 10_000

    /// Creates the rulebook; with `sharedStore`, for a store other daemons write too.
    public init(sharedStore: Bool = false, maximumWaiting: Int = Rulebook.defaultMaximumWaiting) {
        rechecksUnknownNames = sharedStore
        self.maximumWaiting = max(1, maximumWaiting)
    }

    // MARK: Before the transaction

    /// Checks what `command` can be checked without stored state, against `catalog` at `now`;
    /// a submission's idempotency key becomes `actor`'s own.
    public func check(
        _ command: QuoteCommand, in catalog: Catalog, at now: Date, by actor: Actor = .anonymous
    ) -> Result<CheckedCommand, QuoteError> {
        switch command {
        case .submit(let submission, let key, let book, let wait):
            do {
                return .success(
                    .submit(
                        try CheckedSubmission(
                            submission, in: catalog, at: now,
                            // Kept only with an idempotency key, so computed only then.
                            digest: key == nil ? nil : SubmissionDigest(submission, book: book, wait: wait)),
                        idempotencyKey: key.map(actor.storedIdempotencyKey), book: book, wait: wait))
            } catch {
                // The store's catalog may be newer (alone on its store, a retry with a key is
                // answered by `replay`; shared, the transaction checks and replays).
                guard rechecksUnknownNames, error.code == .notInCatalog else { return .failure(error) }
                return .success(.recheck(command, refusal: error))
            }
        case .resolve(let id, let resolution):
            return .success(.resolve(id, resolution))
        case .book(let id, let name, let wait):
            guard let name else { return .success(.book(id, mechanic: nil, wait: wait)) }
            guard let mechanic = catalog.mechanic(named: name) else { return unknown(name, command) }
            return .success(.book(id, mechanic: mechanic, wait: wait))
        case .complete(let id):
            return .success(.complete(id))
        case .cancel(let id, let reason):
            return .success(.cancel(id, reason: reason))
        case .setDuty(let name, let onDuty):
            guard let mechanic = catalog.mechanic(named: name) else { return unknown(name, command) }
            return .success(.setDuty(mechanic, onDuty: onDuty))
        case .reassign(let id, let name):
            guard let name else { return .success(.reassign(id, mechanic: nil)) }
            guard let mechanic = catalog.mechanic(named: name) else { return unknown(name, command) }
            return .success(.reassign(id, mechanic: mechanic))
        case .addMechanic(let name, let skill):
            if let problem = Catalog.textProblem(name) {
                return .failure(QuoteError(.invalidCatalog, "the mechanic's name \(problem)"))
            }
            return .success(.addMechanic(name: name.trimmingCharacters(in: .whitespaces), skill: skill))
        case .updateMechanic(let name, let skill):
            return .success(.updateMechanic(mechanic: name, skill: skill))
        case .retireMechanic(let name):
            return .success(.retireMechanic(mechanic: name))
        case .applyCatalog(let catalog):
            return .success(.applyCatalog(catalog))
        }
    }

    /// Where `command` goes once checked against `catalog` at `now`: a write for the batch's
    /// transaction, or its refusal; a refused submission that carries an idempotency key may
    /// be a retry of one valid when first sent, so it becomes a read that the store answers.
    public func admit(
        _ command: QuoteCommand, in catalog: Catalog, at now: Date, by actor: Actor = .anonymous
    ) -> Admission {
        switch check(command, in: catalog, at: now, by: actor) {
        case .success(let checked):
            return .write(CheckedRequest(checked, by: actor))
        case .failure(let refusal):
            guard case .submit(let submission, let key?, let book, let wait) = command else { return .refused(refusal) }
            let digest = SubmissionDigest(submission, book: book, wait: wait)
            return .replay(
                ReadRequest(.replay(idempotencyKey: key, digest: digest, refusal: refusal), by: actor), refusal: refusal
            )
        }
    }

    /// The answer to a name the batch's catalog does not know: refused, or on a shared store
    /// looked up again in the transaction, where the store's catalog may be newer.
    private func unknown(_ name: String, _ command: QuoteCommand) -> Result<CheckedCommand, QuoteError> {
        let refusal = QuoteError(.unknownMechanic, "no mechanic named \"\(QuoteLimits.echo(name))\"")
        return rechecksUnknownNames ? .success(.recheck(command, refusal: refusal)) : .failure(refusal)
    }

    /// The answer to a submission refused by ``check(_:in:at:by:)`` that carries an idempotency
    /// key: when a quote was already submitted under that key for the same submission
    /// (`digest`), the retry is answered with it, as a valid one would be (the catalog may
    /// have changed since); for another submission, an `idempotency_conflict`; otherwise the
    /// refusal.
    public func replay(
        idempotencyKey: String, digest: SubmissionDigest, refusal: QuoteError, from store: any QuoteStore,
        by actor: Actor = .anonymous
    ) async throws(StoreError) -> Result<CommandOutcome, QuoteError> {
        guard let original = try await store.quote(idempotencyKey: actor.storedIdempotencyKey(idempotencyKey)),
            actor.reaches(original)
        else { return .failure(refusal) }
        if let conflict = Self.conflict(original, key: idempotencyKey, digest: digest) { return .failure(conflict) }
        return .success(CommandOutcome(quote: original, events: [], replayed: true))
    }

    /// The refusal of a retry whose submission differs from the one `original` was created
    /// by; `nil` when they match (or `original` predates fingerprints).
    static func conflict(_ original: Quote, key: String, digest: SubmissionDigest) -> QuoteError? {
        guard let stored = original.submissionDigest, stored != digest else { return nil }
        return QuoteError(
            .idempotencyConflict,
            "the idempotency key \"\(QuoteLimits.echo(key))\" was used for a different submission (quote \(original.id)); nothing was applied"
        )
    }

    // MARK: Both

    /// Admits `commands` against `catalog` and commits them in one transaction of `store`,
    /// answering each in order, as the daemon's stages do (``admit(_:in:at:by:)``, then
    /// ``applyBatch(requests:catalog:to:)`` and ``answer(_:catalog:from:maximumRows:)``): for
    /// programs that hold commands rather than requests (tools, tests).
    public func apply(
        _ commands: [QuoteCommand], catalog: Catalog, to store: any QuoteStore, at now: Date = Date(),
        by actor: Actor = .anonymous
    ) async throws(StoreError) -> [Result<CommandOutcome, QuoteError>] {
        let admitted = commands.map { admit($0, in: catalog, at: now, by: actor) }
        let writes = admitted.compactMap { admission -> CheckedRequest? in
            if case .write(let request) = admission { request } else { nil }
        }
        let applied = try await applyBatch(requests: writes, catalog: catalog, to: store).results
        var results: [Result<CommandOutcome, QuoteError>] = []
        results.reserveCapacity(commands.count)
        // One result per write, in order: `applyBatch` answers every request it is given.
        var nextWrite = applied.makeIterator()
        for admission in admitted {
            switch admission {
            case .write:
                guard let result = nextWrite.next() else {
                    throw StoreError(.database, "integrity: the store answered fewer writes than it was given")
                }
                results.append(result)
            case .replay(let read, let refusal):
                let answer = try await answer(read, catalog: catalog, from: store, maximumRows: 1)
                guard case .written(let result) = answer else {
                    results.append(.failure(refusal))
                    continue
                }
                results.append(result)
            case .refused(let refusal):
                results.append(.failure(refusal))
            }
        }
        return results
    }

    // MARK: In the transaction

    /// Applies `commands`, all asked `by` one actor, in one transaction of `store`; see
    /// ``applyBatch(requests:catalog:to:)``.
    public func apply(
        _ commands: [CheckedCommand], catalog: Catalog, to store: any QuoteStore, by actor: Actor = .anonymous
    ) async throws(StoreError) -> [Result<CommandOutcome, QuoteError>] {
        try await applyBatch(requests: commands.map { CheckedRequest($0, by: actor) }, catalog: catalog, to: store)
            .results
    }

    /// Applies `requests` in one transaction of `store`, each succeeding or refused on its
    /// own, and says which catalog is in force after it when the batch changed it (or found
    /// the store's newer than `catalog`): the one to check the next batches against. Throws
    /// only when the store failed, and then nothing was applied, unless the error says the
    /// outcome is unknown (`StoreError.outcomeUnknown`).
    public func applyBatch(
        requests: [CheckedRequest], catalog: Catalog, to store: any QuoteStore
    ) async throws(StoreError) -> (results: [Result<CommandOutcome, QuoteError>], catalog: Catalog?) {
        guard !requests.isEmpty else { return ([], nil) }
        // Other daemons may have changed a shared store's catalog since the batch began.
        let shared = store.isShared
        let committed = try await store.write { transaction throws(StoreError) in
            try await self.applyBatch(requests: requests, catalog: catalog, in: transaction, refreshing: shared)
        }
        let (results, inForce) = committed.value
        let offset = committed.sequenceOffset
        guard offset != 0 else { return (results, inForce) }
        let numbered = results.map { result in
            result.map { outcome in
                var outcome = outcome
                for index in outcome.events.indices { outcome.events[index].seq += offset }
                return outcome
            }
        }
        return (numbered, inForce)
    }

    /// Applies `requests` in `transaction`, in order, recording the catalog if they changed
    /// it; returns the catalog in force after them when it is not `catalog`.
    /// With `refreshing`, the store's catalog is read first, in case it is newer.
    public func applyBatch(
        requests: [CheckedRequest], catalog snapshot: Catalog, in transaction: any StoreTransaction,
        refreshing: Bool = false
    ) async throws(StoreError) -> (results: [Result<CommandOutcome, QuoteError>], catalog: Catalog?) {
        let catalog = BatchCatalog(snapshot)
        if requests.contains(where: \.command.changesCatalog) {
            // The catalog's lock before any other: taken after the rows a booking locks, it
            // would order locks unlike a transaction that only books.
            _ = try await catalog.refresh(in: transaction, forChange: true)
        } else if refreshing {
            _ = try await catalog.refresh(in: transaction, forChange: false)
        }
        // Then the wait-list's, before any row: held alone by a batch that may put a quote in
        // line, shared by those that only free mechanics. One look at each command.
        var mayServeLine = false
        var mayPutInLine = false
        for request in requests {
            if request.command.mayPutInLine {
                mayPutInLine = true
                break
            }
            mayServeLine = mayServeLine || request.command.mayServeLine
        }
        if mayPutInLine || mayServeLine { try await transaction.lockWaitList(mayPutInLine: mayPutInLine) }
        var results: [Result<CommandOutcome, QuoteError>] = []
        results.reserveCapacity(requests.count)
        let keys = requests.compactMap { request -> String? in
            if case .submit(_, let key?, _, _) = request.command { return key }
            return nil
        }
        if !keys.isEmpty { try await transaction.prefetch(idempotencyKeys: keys) }
        for request in requests {
            let steps = Steps(transaction: transaction, actor: request.actor)
            results.append(
                try await Self.refusable { try await self.execute(request.command, catalog: catalog, with: steps) })
        }
        if catalog.changed { try await transaction.recordCatalog(catalog.catalog) }
        // Versions name catalogs: comparing them costs nothing whatever the roster's size.
        return (results, catalog.catalog.version == snapshot.version ? nil : catalog.catalog)
    }

    private func execute(
        _ command: CheckedCommand, catalog batch: BatchCatalog, with steps: Steps
    ) async throws -> CommandOutcome {
        let transaction = steps.transaction
        // The catalog is read where a command needs it, not copied out for every command: a
        // copy retains each of its arrays and indexes.
        switch command {
        case .submit(let submission, let key, let book, let wait):
            return try await submit(submission, key: key, book: book, wait: wait, in: batch, with: steps)
        case .resolve(let id, let resolution):
            let stored = try await steps.load(id, lockingIf: .pending)
            let resolved = try stored.resolved(with: resolution, in: batch.catalog, at: transaction.now)
            return CommandOutcome(quote: resolved, events: try await steps.record(resolved, replacing: stored))
        case .book(let id, let mechanic, let wait):
            return try await book(
                try await steps.load(id, lockingIf: .ready), mechanic: mechanic, wait: wait, with: steps)
        case .complete(let id):
            let stored = try await steps.load(id, lockingIf: .booked)
            return try await finish(stored, as: try stored.completed(at: transaction.now), with: steps)
        case .cancel(let id, let reason):
            let stored = try await steps.load(id)
            return try await finish(stored, as: try stored.cancelled(reason: reason, at: transaction.now), with: steps)
        case .serveWaitList:
            return try await serveWaitList(with: steps)
        case .setDuty(let mechanic, let onDuty):
            return try await setDuty(mechanic, onDuty: onDuty, with: steps)
        case .reassign(let id, let mechanic):
            let stored = try await steps.load(id, lockingIf: .booked)
            // Its mechanic is released before another is claimed (a quote holds one at
            // most), so a refusal after that undoes both.
            try await transaction.savepoint()
            do {
                let outcome = try await reassign(stored, to: mechanic, with: steps)
                try await transaction.releaseSavepoint()
                return outcome
            } catch let refusal as QuoteError {
                try await transaction.rollbackToSavepoint()
                throw refusal
            }
        case .addMechanic(let name, let skill):
            return try await addMechanic(name, skill: skill, catalog: batch, with: steps)
        case .updateMechanic(let name, let skill):
            return try await updateMechanic(name, skill: skill, catalog: batch, with: steps)
        case .retireMechanic(let name):
            return try await retireMechanic(name, catalog: batch, with: steps)
        case .applyCatalog(let next):
            return try await applyCatalog(next, catalog: batch, with: steps)
        case .recheck(let command, let refusal):
            // The batch's catalog may have been brought up to the store's already.
            _ = try await batch.refresh(in: transaction, forChange: false)
            var fresh = refusal
            switch check(command, in: batch.catalog, at: transaction.now, by: steps.actor) {
            case .success(.recheck(_, let again)): fresh = again
            case .success(let checked): return try await execute(checked, catalog: batch, with: steps)
            case .failure(let again): fresh = again
            }
            // Refused still: a retry under an idempotency key is answered with its quote, as
            // `replay` does (the catalog may have changed since it was submitted).
            if case .submit(let submission, let key?, let book, let wait) = command,
                let original = try await transaction.quote(idempotencyKey: steps.actor.storedIdempotencyKey(key)),
                steps.actor.reaches(original)
            {
                let digest = SubmissionDigest(submission, book: book, wait: wait)
                if let conflict = Self.conflict(original, key: key, digest: digest) { throw conflict }
                return CommandOutcome(quote: original, events: [], replayed: true)
            }
            throw fresh
        }
    }

    // MARK: Use cases

    /// Records `submission`, checked against the batch's catalog again when it was checked against
    /// another version (after a retry under its key, which is answered with its quote whatever
    /// the catalog became).
    private func submit(
        _ checked: CheckedSubmission, key: String?, book: Bool, wait: Bool, in batch: BatchCatalog, with steps: Steps
    ) async throws -> CommandOutcome {
        let transaction = steps.transaction
        let submission: CheckedSubmission
        if checked.catalogVersion == batch.catalog.version {
            submission = checked
        } else {
            // A retry is answered with its quote whatever the catalog became.
            if let key, let original = try await transaction.quote(idempotencyKey: key) {
                return try Self.replay(original, of: checked, key: key)
            }
            submission = try checked.rechecked(in: batch.catalog, at: transaction.now)
        }
        let now = transaction.now
        let by = steps.actor.name
        let digest = key == nil ? nil : submission.digest
        let inserted = try await transaction.insertSubmission(idempotencyKey: key, by: by) { id in
            (
                submitted: Quote(
                    id: id, request: submission.request, submittedAt: now, submittedBy: by, submissionDigest: digest),
                priced: Quote(
                    id: id, request: submission.request, stage: submission.stage, submittedAt: now, updatedAt: now,
                    submittedBy: by, submissionDigest: digest)
            )
        }
        let priced: Quote
        let events: [StoredEvent]
        switch inserted {
        case .existing(let original): return try Self.replay(original, of: checked, key: key)
        case .inserted(let quote, let logged): (priced, events) = (quote, logged)
        }
        guard book && priced.status == .ready else { return CommandOutcome(quote: priced, events: events) }

        // If no mechanic can be had (and it may not wait), the quote stays recorded and ready.
        try await transaction.savepoint()
        do {
            let booking = try await self.book(priced, mechanic: nil, wait: wait, with: steps)
            try await transaction.releaseSavepoint()
            return CommandOutcome(
                quote: booking.quote, events: events + booking.events, waitPosition: booking.waitPosition)
        } catch let refusal as QuoteError {
            try await transaction.rollbackToSavepoint()
            return CommandOutcome(quote: priced, events: events, bookingError: refusal)
        }
    }

    /// The answer to a submission whose idempotency key an earlier one holds: that quote, or
    /// a conflict when the two differ.
    private static func replay(_ original: Quote, of checked: CheckedSubmission, key: String?) throws -> CommandOutcome
    {
        if let key, let digest = checked.digest, let conflict = Self.conflict(original, key: key, digest: digest) {
            throw conflict
        }
        return CommandOutcome(quote: original, events: [], replayed: true)
    }

    /// Books a ready quote: with `named`, that mechanic or a refusal; otherwise the
    /// customer's preferred mechanic when free and able, else the first free mechanic able to
    /// do every service in `DispatchOrder`. With `wait`, what would be refused for want of a
    /// free mechanic waits in line instead (for `named` alone, if given).
    private func book(
        _ quote: Quote, mechanic named: Mechanic?, wait: Bool, with steps: Steps
    ) async throws -> CommandOutcome {
        let transaction = steps.transaction
        guard quote.status == .ready else { throw QuoteError.illegalTransition(from: quote.status, to: .booked) }
        let required = quote.request.requiredSkill
        let mechanic: Mechanic
        if let named {
            // An unable mechanic is refused before their busy flag is touched.
            _ = try quote.booked(with: named, at: transaction.now)
            guard try await transaction.claim(named.id, minimumSkill: required, for: quote.id) else {
                // Off duty, they may not be back today: no line to wait in for them.
                try await Self.checkOnDuty(named, in: transaction)
                guard wait else { throw QuoteError(.mechanicBusy, "\(named.name) is booked on another quote") }
                return try await enqueue(quote, for: named, with: steps)
            }
            mechanic = named
        } else if let preferred = quote.request.preferredMechanic,
            try await transaction.claim(preferred.id, minimumSkill: required, for: quote.id)
        {
            mechanic = preferred
        } else {
            guard let picked = try await transaction.claimFirstFree(minimumSkill: required, for: quote.id) else {
                guard wait else {
                    throw QuoteError(
                        .noMechanicAvailable, "no free mechanic has the \(required) skill this quote needs")
                }
                return try await enqueue(quote, for: nil, with: steps)
            }
            mechanic = picked
        }
        // The claim was the last decision: from here on a refusal would be a broken invariant.
        let now = transaction.now
        let booked = try Self.afterWriting { () throws(QuoteError) in try quote.booked(with: mechanic, at: now) }
        let events = try await steps.record(booked, replacing: quote, with: [.mechanicBusy(mechanic, quote: quote.id)])
        return CommandOutcome(quote: booked, events: events)
    }

    /// Puts a ready quote in line, for `mechanic` alone when given; refused, and undone, when
    /// the line already holds ``maximumWaiting`` quotes.
    private func enqueue(_ quote: Quote, for mechanic: Mechanic?, with steps: Steps) async throws -> CommandOutcome {
        let transaction = steps.transaction
        let waiting = try quote.waiting(for: mechanic, at: transaction.now)
        try await transaction.savepoint()
        let events = try await steps.record(waiting, replacing: quote)
        let position = try await transaction.waitPosition(of: quote.id)
        guard position <= maximumWaiting else {
            try await transaction.rollbackToSavepoint()
            throw QuoteError(
                .noMechanicAvailable,
                "no mechanic is free for this quote, and the wait-list is full (\(maximumWaiting) quotes)")
        }
        try await transaction.releaseSavepoint()
        return CommandOutcome(quote: waiting, events: events, waitPosition: position)
    }

    /// Moves `stored` to `next` (completed or cancelled), freeing its mechanic if it had one;
    /// the mechanic freed takes the oldest waiting quote they can serve, in the same
    /// transaction, its events after the release's (and caused by the same actor).
    private func finish(_ stored: Quote, as next: Quote, with steps: Steps) async throws -> CommandOutcome {
        guard let mechanic = stored.mechanic else {
            return CommandOutcome(quote: next, events: try await steps.record(next, replacing: stored))
        }
        guard try await steps.transaction.release(mechanic.id, from: stored.id) else {
            throw StoreError(.database, "integrity: mechanic \(mechanic.id) was not held by quote \(stored.id)")
        }
        var events = try await steps.record(next, replacing: stored, with: [.mechanicFree(mechanic, quote: stored.id)])
        events += try await serve(mechanic, with: steps)
        return CommandOutcome(quote: next, events: events)
    }

    /// Books the oldest waiting quote that the free `mechanic` can serve (for a quote that
    /// named a mechanic: only that one) with them; no events when no one waits for them, or
    /// they cannot be claimed (no longer active).
    func serve(_ mechanic: Mechanic, with steps: Steps) async throws(StoreError) -> [StoredEvent] {
        let transaction = steps.transaction
        guard let next = try await transaction.oldestWaiting(servableBy: mechanic),
            try await transaction.claim(mechanic.id, minimumSkill: next.request.requiredSkill, for: next.id)
        else { return [] }
        let now = transaction.now
        let booked = try Self.afterWriting { () throws(QuoteError) in try next.booked(with: mechanic, at: now) }
        return try await steps.record(booked, replacing: next, with: [.mechanicBusy(mechanic, quote: next.id)])
    }

    /// Takes `mechanic` off duty (what they hold stays theirs) or puts them back on duty,
    /// where they take the oldest waiting quote they can serve at once. Asking for the duty
    /// they are on already changes nothing and succeeds.
    private func setDuty(_ mechanic: Mechanic, onDuty: Bool, with steps: Steps) async throws -> CommandOutcome {
        let duty = CommandOutcome.Duty(mechanic: mechanic, onDuty: onDuty)
        guard try await steps.transaction.setDuty(mechanic.id, onDuty: onDuty) else {
            return CommandOutcome(quote: nil, events: [], duty: duty)
        }
        var events = try await steps.transaction.append([.mechanicDuty(mechanic, onDuty: onDuty)], by: steps.actor.name)
        var quote: Quote?
        if !onDuty {
            events += try await unqueue(waitingFor: mechanic, notice: "\(mechanic.name) is off duty.", with: steps)
        } else {
            let served = try await serve(mechanic, with: steps)
            quote = served.first?.quote
            events += served
        }
        return CommandOutcome(quote: quote, events: events, duty: duty)
    }

    /// Moves a booked quote off its mechanic: to `named`, who must be free, on duty and able;
    /// without a name, to the first free able one in `DispatchOrder` other than its own; when
    /// no one is, to the front of the wait-list. The mechanic it leaves is freed and, on
    /// duty, serves the line.
    private func reassign(_ quote: Quote, to named: Mechanic?, with steps: Steps) async throws -> CommandOutcome {
        let transaction = steps.transaction
        guard case .booked = quote.stage, let previous = quote.mechanic else {
            throw QuoteError.illegalTransition(from: quote.status, to: .booked)
        }
        let now = transaction.now
        // An unable or the same mechanic is refused before anything is written.
        if let named { _ = try quote.reassigned(to: named, at: now) }
        guard try await transaction.release(previous.id, from: quote.id) else {
            throw StoreError(.database, "integrity: mechanic \(previous.id) was not held by quote \(quote.id)")
        }
        let required = quote.request.requiredSkill
        let moved: Quote
        var claimed: Mechanic?
        if let named {
            guard try await transaction.claim(named.id, minimumSkill: required, for: quote.id) else {
                try await Self.checkOnDuty(named, in: transaction)
                throw QuoteError(.mechanicBusy, "\(named.name) is booked on another quote")
            }
            claimed = named
            moved = try quote.reassigned(to: named, at: now)
        } else if let picked = try await transaction.claimFirstFree(
            minimumSkill: required, for: quote.id, excluding: previous.id)
        {
            claimed = picked
            moved = try quote.reassigned(to: picked, at: now)
        } else if try await transaction.claim(previous.id, minimumSkill: required, for: quote.id) {
            // No one else is free, and its own mechanic, on duty, would take it straight back.
            throw QuoteError(.noMechanicAvailable, "no other free mechanic has the \(required) skill this quote needs")
        } else {
            moved = try quote.requeued(at: now)
        }
        var changes: [StoredEvent.Kind] = [.quoteReassigned(from: previous, quote: moved)]
        if let claimed { changes.append(.mechanicBusy(claimed, quote: quote.id)) }
        changes.append(.mechanicFree(previous, quote: quote.id))
        var events = try await transaction.append(changes, by: steps.actor.name)
        try await transaction.update(
            moved, step: StateChange(from: quote.status, to: moved.status, at: now, seq: events[0].seq))
        var position: Int?
        if moved.status == .waiting {
            try await transaction.putFirstInLine(quote.id)
            position = try await transaction.waitPosition(of: quote.id)
        }
        events += try await serve(previous, with: steps)
        return CommandOutcome(quote: moved, events: events, waitPosition: position)
    }

    /// Gives every free mechanic, in `DispatchOrder`, the oldest waiting quote they can serve.
    /// The outcome shows the last quote booked; it is refused when none could be.
    func serveWaitList(with steps: Steps) async throws -> CommandOutcome {
        var events: [StoredEvent] = []
        var last: Quote?
        for mechanic in try await steps.transaction.freeMechanics() {
            let served = try await serve(mechanic, with: steps)
            if let quote = served.first?.quote { last = quote }
            events += served
        }
        guard let last else { throw QuoteError(.noMechanicAvailable, "no waiting quote can be served now") }
        return CommandOutcome(quote: last, events: events)
    }

    /// Refuses `mechanic`, who could not be claimed, when the reason is that they are off
    /// duty or no longer on the roster (a catalog snapshot older than the store's).
    private static func checkOnDuty(_ mechanic: Mechanic, in transaction: any StoreTransaction) async throws {
        switch try await transaction.isOnDuty(mechanic.id) {
        case nil: throw QuoteError(.unknownMechanic, "\(mechanic.name) is no longer on the roster")
        case false?: throw QuoteError(.mechanicOffDuty, "\(mechanic.name) is off duty")
        case true?: return
        }
    }

    // MARK: Steps

    /// One request's transaction and actor: the steps every use case is made of.
    struct Steps {
        let transaction: any StoreTransaction
        let actor: Actor

        /// The quote `id`, if it exists for the actor. With `status`, for a command that
        /// refuses a quote in any other (every one that loads a quote but `cancel`): only such
        /// a quote is locked (`StoreTransaction.quote(_:lockingIf:)`).
        func load(_ id: QuoteID, lockingIf status: QuoteStatus? = nil) async throws -> Quote {
            let found =
                if let status { try await transaction.quote(id, lockingIf: status) } else {
                    try await transaction.quote(id)
                }
            guard let quote = found, actor.reaches(quote) else { throw QuoteError(.unknownQuote, "no quote \(id)") }
            return quote
        }

        /// Appends the event announcing `quote`'s new state, then `more`, and stores the quote
        /// with the step (the event first: the step names its sequence number).
        func record(
            _ quote: Quote, replacing stored: Quote, with more: [StoredEvent.Kind] = []
        ) async throws(StoreError) -> [StoredEvent] {
            let from = stored.status
            let events = try await transaction.append([.quote(from: from, quote: quote)] + more, by: actor.name)
            try await transaction.update(
                quote, step: StateChange(from: from, to: quote.status, at: transaction.now, seq: events[0].seq))
            return events
        }
    }

    // MARK: Outcomes

    /// Runs `body` as one command: a refusal is its result; a store failure is thrown.
    static func refusable<T>(_ body: () async throws -> T) async throws(StoreError) -> Result<T, QuoteError> {
        do {
            return .success(try await body())
        } catch let refusal as QuoteError {
            return .failure(refusal)
        } catch let failure as StoreError {
            throw failure
        } catch {
            throw StoreError(.database, "\(error)")
        }
    }

    /// `body`, which runs after a command has written and so must not be refused: a refusal
    /// there is a broken invariant, and fails the whole transaction instead.
    static func afterWriting<T>(_ body: () throws(QuoteError) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw StoreError(.database, "integrity: refused after writing: \(error)")
        }
    }
}
