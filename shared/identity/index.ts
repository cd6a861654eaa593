/** The people requests act for: end users, verified from their identity provider's tokens or taken on the caller's word. */
export { END_USER_ID, endUserOfView, GROUP_NAME, groupsInput, turnUser, userOfTurn, userView, type EndUser } from './end-user';
export { admittedUser, assertClaimAllowed, connectionsRefused, namedUser } from './acting-user';
export { endUserAuthInput, endUserAuthShown, endUserAuthOf, removeEndUserAuth, setEndUserAuth, showEndUserAuth, type StoredEndUserAuth } from './end-user-auth';
export { endUserOf, verifyEndUserToken } from './end-user-token';
export { oauthProviderInput, oauthProviderReplacement, oauthProviderShown, getProvider, listProviders, putProvider, showProvider, PROVIDER_NAME, scopesInput, type StoredOAuthProvider } from './oauth-providers';
export { accessTokenFor, completeAuthorization, connectionShown, deleteProvider, disconnect, listConnections, showConnection, startAuthorization, tenantOfState, type AuthorizationWaiter } from './oauth-connections';
