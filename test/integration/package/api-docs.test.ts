import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { API_DOCS_FILE, API_DOCS_REGENERATE, apiDocsStaleness, renderApiDocs } from '../../../lib/packaging/api-docs';

/**
 * API.md is what jsii-docgen renders from the library's jsii assembly now (built here when stale, as the
 * npm package's test builds it; the build is skipped when current).
 */
describe('API.md by jsii-docgen', () => {
  let rendered: string;
  beforeAll(() => {
    rendered = renderApiDocs();
  }, 480_000);

  test('GIVEN the current sources WHEN jsii-docgen renders the assembly THEN the committed API.md is that text', () => {
    expect(apiDocsStaleness(rendered)).toBeUndefined();
    expect(fs.readFileSync(API_DOCS_FILE, 'utf8')).toBe(rendered);
  });

  test('GIVEN an API.md whose doc comment changed WHEN checked THEN it is stale, with the line and the command', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'api-docs-'));
    try {
      const file = path.join(dir, 'API.md');
      fs.writeFileSync(file, rendered.replace('A Lambda function that consumes the database', 'A function that consumes the database'));
      const stale = apiDocsStaleness(rendered, file);
      expect(stale).toMatch(/is stale against the library's jsii assembly \(first difference at line \d+: .*A function that consumes/);
      expect(stale).toContain(`run ${API_DOCS_REGENERATE}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
