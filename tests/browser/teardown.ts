// After the browser tests: remove the data the two servers of this run kept in a temporary directory.
import fs from 'node:fs';
import { E2E_DATA_ROOT } from '../../playwright.config';

export default function teardown() {
  fs.rmSync(E2E_DATA_ROOT, { recursive: true, force: true });
}
