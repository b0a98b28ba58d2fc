/** AWS-shaped names and the certificates the rehearsal CA issues for them. */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { proxyDomainOf } from '../../lambda/src/tls';
import { AwsNames, awsShapedCertificateRequests, awsShapedId, DEFAULT_AWS_REGION, issueCertificates, RehearsalConfigError, type CertificateSet } from '../../lib/rehearsal';

const ID = /^[a-z0-9]{12}$/;

describe('AWS-shaped names', () => {
  const names = new AwsNames('endpoints-suite');

  test('GIVEN a rehearsal WHEN naming its cluster and instances THEN they have the shapes AWS documents, with one account/Region id', () => {
    const id = names.accountRegionId;
    expect(id).toMatch(ID);
    expect(names.region).toBe(DEFAULT_AWS_REGION);
    expect(names.clusterEndpoint('kit')).toBe(`kit.cluster-${id}.us-east-1.rds.amazonaws.com`);
    expect(names.readerEndpoint('kit')).toBe(`kit.cluster-ro-${id}.us-east-1.rds.amazonaws.com`);
    expect(names.instanceEndpoint('kit-writer')).toBe(`kit-writer.${id}.us-east-1.rds.amazonaws.com`);
  });

  test('GIVEN a proxy WHEN naming its endpoints THEN default and custom endpoints share the proxy domain the consumers check', () => {
    const id = names.proxyId('kit');
    expect(id).toMatch(ID);
    const defaultEndpoint = names.proxyDefaultEndpoint('kit');
    expect(defaultEndpoint).toBe(`kit.proxy-${id}.us-east-1.rds.amazonaws.com`);
    expect(names.proxyCustomEndpoint('kit', 'kit-ro')).toBe(`kit-ro.endpoint.proxy-${id}.us-east-1.rds.amazonaws.com`);
    expect(names.proxyWildcard('kit')).toBe(`*.proxy-${id}.us-east-1.rds.amazonaws.com`);
    // lambda/src/config.ts accepts a custom endpoint for verify-proxy-domain only when it ends in this domain.
    expect(names.proxyCustomEndpoint('kit', 'kit-ro').endsWith(`.${proxyDomainOf(defaultEndpoint)}`)).toBe(true);
  });

  test('GIVEN the same rehearsal twice WHEN naming THEN the ids are the same; another rehearsal, proxy or Region gets others', () => {
    const again = new AwsNames('endpoints-suite');
    expect(again.accountRegionId).toBe(names.accountRegionId);
    expect(again.proxyId('kit')).toBe(names.proxyId('kit'));
    expect(new AwsNames('failover-suite').accountRegionId).not.toBe(names.accountRegionId);
    expect(names.proxyId('other')).not.toBe(names.proxyId('kit'));
    expect(new AwsNames('endpoints-suite', 'eu-west-1').clusterEndpoint('kit')).toMatch(/^kit\.cluster-[a-z0-9]{12}\.eu-west-1\.rds\.amazonaws\.com$/);
    expect(new Set(Array.from({ length: 50 }, (_, i) => awsShapedId(`seed-${i}`))).size).toBe(50);
  });

  test.each<[string, () => unknown, RegExp]>([
    ['an upper-case proxy', () => names.proxyDefaultEndpoint('Kit'), /^invalid rehearsal settings:\n {2}- proxy "Kit" is not an RDS identifier: use 1 to 63 lower-case/],
    ['a trailing hyphen', () => names.clusterEndpoint('kit-'), /cluster "kit-" is not an RDS identifier/],
    ['two hyphens in an endpoint', () => names.proxyCustomEndpoint('kit', 'a--b'), /endpoint "a--b" is not an RDS identifier.*without "--"/],
    ['a made-up Region', () => new AwsNames('x', 'moon'), /region "moon" is not an AWS Region name: use e.g. us-east-1/],
  ])('GIVEN %s WHEN naming THEN RehearsalConfigError names the value and the fix', (_case, call, message) => {
    expect(call).toThrow(RehearsalConfigError);
    expect(call).toThrow(message);
  });
});

describe('certificates shaped like AWS', () => {
  const names = new AwsNames('certificates');
  let dir: string;
  let set: CertificateSet;
  const cert = (file: string) => new X509Certificate(readFileSync(set.certificates[file]!.certFile));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kit-aws-certs-'));
    set = await issueCertificates(dir, awsShapedCertificateRequests({ names, proxy: 'kit', cluster: 'kit', instances: ['kit-writer', 'kit-reader-1'], extraInstanceNames: { 'kit-writer': ['198.18.31.2'] } }), undefined);
  }, 30_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("GIVEN the proxy's certificate WHEN checked THEN it covers the default endpoint only, as RDS Proxy's wildcard does", () => {
    const proxy = cert('proxy');
    expect(proxy.subject).toBe(`CN=${names.proxyWildcard('kit')}`);
    expect(proxy.subjectAltName).toBe(`DNS:${names.proxyWildcard('kit')}`);
    expect(proxy.checkHost(names.proxyDefaultEndpoint('kit'))).toBe(names.proxyWildcard('kit'));
    expect(proxy.checkHost(names.proxyCustomEndpoint('kit', 'kit-ro'))).toBeUndefined();
    expect(proxy.checkHost(names.clusterEndpoint('kit'))).toBeUndefined();
  });

  test("GIVEN an instance's certificate WHEN checked THEN its CN is the instance endpoint and it also names the cluster and reader endpoints", () => {
    const writer = cert('instance-kit-writer');
    expect(writer.subject).toBe(`CN=${names.instanceEndpoint('kit-writer')}`);
    for (const host of [names.instanceEndpoint('kit-writer'), names.clusterEndpoint('kit'), names.readerEndpoint('kit')]) expect(writer.checkHost(host)).toBe(host);
    expect(writer.checkIP('198.18.31.2')).toBe('198.18.31.2');
    expect(writer.checkHost(names.instanceEndpoint('kit-reader-1'))).toBeUndefined();
    expect(cert('instance-kit-reader-1').checkIP('198.18.31.2')).toBeUndefined();
  });

  test('GIVEN the set WHEN verified THEN every certificate is signed by the one CA, whose key is gone, and keys are private', () => {
    const ca = new X509Certificate(readFileSync(set.caFile));
    for (const file of ['proxy', 'instance-kit-writer', 'instance-kit-reader-1']) {
      expect(cert(file).verify(ca.publicKey)).toBe(true);
      expect(statSync(set.certificates[file]!.keyFile).mode & 0o777).toBe(0o600);
    }
    expect(() => statSync(join(dir, 'ca.key'))).toThrow(/ENOENT/);
  });

  test('GIVEN two requests for one file WHEN issuing THEN it refuses before making anything', async () => {
    const request = { file: 'proxy', commonName: 'x', names: ['x'] };
    await expect(issueCertificates(join(dir, 'twice'), [request, request], undefined)).rejects.toThrow(/file "proxy" is not a unique file stem/);
    expect(() => statSync(join(dir, 'twice'))).toThrow(/ENOENT/);
  });
});
