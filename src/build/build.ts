/**
 * `npm run build`: writes the service's bundle to `dist/` (bundle-service.ts).
 * `npm start` runs it first.
 */
import path from 'node:path';
import { bundleService } from './bundle-service.ts';

try {
  const { entry, buildMs } = await bundleService();
  console.log(`built ${path.relative(process.cwd(), entry) || entry} in ${Math.round(buildMs)} ms`);
} catch (error) {
  console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
