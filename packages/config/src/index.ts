export { fields, serviceFields } from './fields.js';
export { ConfigError, loadConfig, loadConfigOrExit, type ConfigBootIo } from './load.js';
