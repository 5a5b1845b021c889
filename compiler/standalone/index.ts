/**
 * The standalone validator module (docs/api.md, `?format=module`): a
 * ruleset in, one self-contained ES module out, plus the bounded cache the
 * service keeps built modules in.
 */
export {
  buildStandaloneModule,
  StandaloneBuildError,
  type StandaloneModule,
  type StandaloneModuleOptions,
} from './build-standalone-module.ts';
export { DEFAULT_MODULE_CACHE_SIZE, StandaloneModuleCache } from './module-cache.ts';
