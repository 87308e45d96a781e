import Foundation
import Logging
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// Changing one's e-mail address, and deleting one's account.
extension AccountsService {
    public func requestEmailChange(
        request: Skiff_Accounts_V1_RequestEmailChangeRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_RequestEmailChangeResponse {
        let user = try context.requireUser()
        try AccountsRequestBounds.check(request)
        let newEmail = try rules.validateEmail(request.newEmail)
        let account = try await checkCurrentPassword(request.currentPassword, of: user)
        guard newEmail != account.email else {
            throw DomainError(.invalidArgument, "new_email is the account's address already.")
        }
        let now = time.now()
        try rationEmail(to: newEmail, now: now)
        let token = SecretToken.generate()
        let masked = Self.masked(newEmail)
        // The token is stored now, whatever the address, replacing earlier requests' tokens (ConfirmEmailChange
        // refuses a taken address). Whether the address is taken must not show in the answer or its timing:
        // the look-up and the mail happen after answering.
        try await store.insertOneTimeToken(
            OneTimeToken(
                tokenHash: token.hash,
                kind: .emailChange,
                accountID: account.id,
                expiresAt: now.addingTimeInterval(configuration.verificationTokenLifetime.timeInterval),
                createdAt: now,
                newEmail: newEmail
            )
        )
        afterAnswering("e-mail change") { [self] in
            if let holder = try await store.account(email: newEmail), holder.verified {
                try await mailer.send(
                    MailMessage(
                        to: newEmail,
                        subject: "Someone tried to move a Skiff account to your address",
                        body: "A Skiff user asked to change their account's address to this one, which already has "
                            + "an account, so nothing changed. If it was you, delete or change that account first."
                    )
                )
            } else {
                try await mailer.send(
                    MailMessage(
                        to: newEmail,
                        subject: "Confirm your new Skiff address",
                        body: "Confirm this address to log in to Skiff with it from now on (within 24 hours). "
                            + "If you did not ask for it, ignore this e-mail: nothing changes unless the token is used."
                            + "\n\nE-mail change token: \(token.value)\n"
                    )
                )
            }
            try await mailer.send(
                MailMessage(
                    to: account.email,
                    subject: "Your Skiff address is about to change",
                    body: "Someone with your password asked to change your Skiff account's address to \(masked). "
                        + "It changes only once that address is confirmed. If it was not you, change your password now."
                )
            )
        }
        return Skiff_Accounts_V1_RequestEmailChangeResponse()
    }

    public func confirmEmailChange(
        request: Skiff_Accounts_V1_ConfirmEmailChangeRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_ConfirmEmailChangeResponse {
        try AccountsRequestBounds.check(request)
        guard !request.token.isEmpty else {
            throw DomainError(
                .invalidArgument,
                "token is empty: use the token from the e-mail sent to the new address."
            )
        }
        let change: AccountLifecycle.EmailChange
        do {
            change = try await store.changeEmail(tokenHash: TokenHash(of: request.token), now: time.now())
        } catch let error as DomainError where error.code == .notFound || error.code == .failedPrecondition {
            throw DomainError(
                .failedPrecondition,
                "The e-mail change token is unknown, used, replaced by a newer request or expired; "
                    + "ask again with RequestEmailChange."
            )
        } catch let error as DomainError where error.code == .alreadyExists {
            throw DomainError(.alreadyExists, "Another account took this address meanwhile; nothing changed.")
        }
        let masked = Self.masked(change.account.email)
        afterAnswering("e-mail change notice") { [self] in
            try await mailer.send(
                MailMessage(
                    to: change.previousEmail,
                    subject: "Your Skiff address was changed",
                    body: "Your Skiff account now logs in with \(masked) instead of this address. "
                        + "If it was not you, reset your password with the new address's owner or contact support."
                )
            )
        }
        return .with { $0.account = change.account.proto }
    }

    public func deleteAccount(
        request: Skiff_Accounts_V1_DeleteAccountRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_DeleteAccountResponse {
        let user = try context.requireUser()
        try AccountsRequestBounds.check(request)
        let account = try await checkCurrentPassword(request.currentPassword, of: user)
        // Others' services first, so a failure leaves the account (and the caller's session) to try again.
        let listings: Int
        let bids: Int
        do {
            listings = try await cleanup.withdrawListings(sellerID: account.id)
            bids = try await cleanup.withdrawBids(bidderID: account.id)
        } catch {
            logger.warning(
                "Account deletion could not close listings or bids; nothing was erased",
                metadata: ["error": "\(LogText.bounded(error))"]
            )
            throw DomainError(
                .unavailable,
                "Your listings and bids could not all be closed just now; nothing was erased. Try again."
            )
        }
        do {
            _ = try await store.deleteAccount(id: account.id, now: time.now())
        } catch let error as DomainError where error == AccountsStoreError.accountNotFound {
            throw DomainError(.unauthenticated, "The account of this session no longer exists.")
        }
        await cleanup.accountErased(userID: account.id)
        // A listing posted or a bid placed during the deletion, from another session, is closed too.
        let late = (try? await cleanup.withdrawListings(sellerID: account.id)) ?? 0
        let lateBids = (try? await cleanup.withdrawBids(bidderID: account.id)) ?? 0
        let previousEmail = account.email
        afterAnswering("account deletion notice") { [self] in
            try await mailer.send(
                MailMessage(
                    to: previousEmail,
                    subject: "Your Skiff account was deleted",
                    body: "Your Skiff account and its personal details were deleted. "
                        + "You can sign up again with this address at any time."
                )
            )
        }
        return .with {
            $0.withdrawnListings = Int32(clamping: listings + late)
            $0.withdrawnBids = Int32(clamping: bids + lateBids)
        }
    }

    /// An address as told to its account's other address: the first character of the local part, then
    /// `…@` and the domain (`j…@campus.edu`).
    static func masked(_ email: String) -> String {
        guard let at = email.firstIndex(of: "@"), at > email.startIndex else { return "…" }
        return "\(email[email.startIndex])…\(email[at...])"
    }
}
