import { Client } from 'pg';
import { scramSha256Verifier } from '../../../lib/rehearsal';
import { LocalPostgres } from '../support/local-postgres';

describe('scramSha256Verifier', () => {
  test('has PostgreSQL rolpassword shape and a fresh salt each time', () => {
    const a = scramSha256Verifier('pencil');
    expect(a).toMatch(/^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}$/);
    expect(scramSha256Verifier('pencil')).not.toBe(a);
    // Same salt, same verifier: it is a pure function of password, salt and iterations.
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    expect(scramSha256Verifier('pencil', salt)).toBe(scramSha256Verifier('pencil', salt));
  });

  describe('against a real PostgreSQL', () => {
    let pg: LocalPostgres;
    beforeAll(async () => {
      pg = await LocalPostgres.start();
    }, 60000);
    afterAll(() => pg?.stop());

    async function login(user: string, password: string): Promise<void> {
      const client = new Client({ ...pg.connectionConfig(), user, password });
      await client.connect();
      await client.end();
    }

    test('a role whose password is set to the verifier logs in with the plain text, and only with it', async () => {
      // GIVEN a role created with the verifier, not the password
      await pg.query(`CREATE ROLE scram_probe LOGIN PASSWORD '${scramSha256Verifier('correct horse')}'`);
      // THEN PostgreSQL stored it as given and accepts the plain text
      const [row] = await pg.query<{ rolpassword: string }>("SELECT rolpassword FROM pg_authid WHERE rolname = 'scram_probe'");
      expect(row.rolpassword).toMatch(/^SCRAM-SHA-256\$4096:/);
      await expect(login('scram_probe', 'correct horse')).resolves.toBeUndefined();
      await expect(login('scram_probe', 'wrong horse')).rejects.toThrow(/password authentication failed/);
    });
  });
});
