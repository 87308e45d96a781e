// SkiffAPI: the generated Swift code of Skiff's campus-app services, one module for all of them.
//
// For each service (`skiff.accounts.v1.Accounts`, `skiff.listings.v1.Listings`,
// `skiff.bids.v1.Bids`) it holds the message types (`Skiff_Accounts_V1_SignUpRequest`, ...), the
// method descriptors, the `ServiceProtocol` a server implements and the typed `Client` an app
// calls through any `ClientTransport`. Apps add it together with SkiffClient; it depends only on
// SkiffCore and SwiftProtobuf, never on server-only code.
//
// The sources are generated from Protos/skiff/{accounts,listings,bids}/v1 by dev/generate-code.sh;
// the `.proto` files document authentication (`authorization: Bearer <token>` metadata), paging
// and the status codes of every call. Don't edit Generated/ by hand.
