export { fields, serviceFields } from './fields.js';
export {
  ConfigError,
  loadConfig,
  loadConfigOrExit,
  type ConfigBootIo,
  type ConfigCrossCheck,
} from './load.js';
