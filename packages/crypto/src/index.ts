export {
  Keyring,
  KeyVersionUnavailableError,
  LEGACY_KEY_VERSION,
  type Sealed,
  type SealedValue,
} from './keyring.js';
export { isKeyringSpec, parseKeyringSpec, type KeyEntry } from './keyring-spec.js';
export { newId, randomBase32 } from './random-ids.js';
export { constantTimeEqual, sha256Hex } from './digests.js';
