/**
 * Results and signing secrets are sealed with the shared keyring (@gateway/crypto, configured by
 * `ENCRYPTION_KEY`); each row stores the key version beside nonce, tag and ciphertext.
 */

/** AAD of a row owned by an account: `<accountId>:<rowId>`. */
export const rowAad = (accountId: string, rowId: string): string => `${accountId}:${rowId}`;
