/**
 * AWS's SSM Agent for the PgBouncer engine's hosts, carried in the packages object (pooler-packages.ts).
 * Debian is not among the images with the agent preinstalled
 * (https://docs.aws.amazon.com/systems-manager/latest/userguide/ami-preinstalled-agent.html) and Debian
 * does not package it, so Session Manager needs the .deb AWS publishes for Debian Server arm64
 * ("Manually install SSM Agent on Debian Server instances",
 * https://docs.aws.amazon.com/systems-manager/latest/userguide/agent-install-deb.html). The hosts'
 * `dpkg --install *.deb` installs it with the rest; its postinst (aws/amazon-ssm-agent,
 * packaging/ubuntu/postinst) runs `systemctl enable` and `systemctl start amazon-ssm-agent` when PID 1 is
 * systemd, so the bootstrap needs no step of its own.
 *
 * The builder checks the package as AWS documents ("Verifying the signature of SSM Agent",
 * https://docs.aws.amazon.com/systems-manager/latest/userguide/verify-agent-signature.html): the detached
 * signature `<package>.sig` against AWS's public key, which is pinned here with its fingerprint.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PoolerPackagesError } from './pooler-packages-error';

export const SSM_AGENT_PACKAGE = 'amazon-ssm-agent';
/** The hosts' architecture (Graviton); amd64 for a packages object of another architecture. */
export const SSM_AGENT_ARCHITECTURE = 'arm64';
/** When the builder downloads the agent: any Region's bucket serves the same package; the object is not tied to a Region. */
export const SSM_AGENT_DEFAULT_REGION = 'us-east-1';

/**
 * The Region's download of the agent for Debian Server arm64 (User Guide, agent-install-deb.html; the
 * signature file, `.sig` beside it: verify-agent-signature.html, its table of signature file URLs).
 */
export function ssmAgentDebUrl(region: string, architecture: string = SSM_AGENT_ARCHITECTURE): string {
  return `https://s3.${region}.amazonaws.com/amazon-ssm-${region}/latest/debian_${architecture}/${SSM_AGENT_PACKAGE}.deb`;
}
/** The same, for messages: the package to give in place of a download. */
export const SSM_AGENT_DEB_URL = ssmAgentDebUrl('<region>');

/**
 * AWS's public key for SSM Agent packages, "SSM Agent <ssm-agent-signer@amazon.com>", created 2026-06-04,
 * expiring 2027-11-25: the current key of https://docs.aws.amazon.com/systems-manager/latest/userguide/verify-agent-signature.html#verify-agent-signature-current,
 * as AWS's own aws/eks-hybrid pins it (internal/ssm/source.go, commit d5bd0d04, "updating ssm installer gpg
 * keys"). AWS publishes a new key on that page before this one expires; a package signed by another key
 * is refused (verifySsmAgentSignature), and the key and fingerprint here are replaced from that page.
 */
export const SSM_AGENT_SIGNER_KEY = `-----BEGIN PGP PUBLIC KEY BLOCK-----
Version: GnuPG v2.0.22 (GNU/Linux)

mQINBGohhG8BEACxNOk7TM1ywHjW0qrSyH9npRDUjpWAyCD8L1Yu7nLnxwEBtUOk
HgQIo1scTWuwogaBZpAzg22A25AloOrhX8BGTokh71Xm3LbQT8dDQUDT7WRTl4R5
p7786TN79p4DqD3/JyzjiD/keTYyhplBWdyk5BEcqlyVj9Pf/1O6CrOJgGD1oGYK
7lRqMtmXlf86/mKveWvjJTPAF26dkDJZecnrheyEA99XlONm8zAlK6h09JThHBmW
MgDPXDSsVeEyXilPUJFhZJ2HXVG2tS9ioVM309tMX6B3W5woT7w8SA6uV2Pf0jMm
oYmMuCmQMU8/7/vOLQSJm+6Wui5dZywArqtOqXcSledRf7xhmug3Qa5maqY2Ttcn
XqTaH3WaBLtJZYqDJcsUH99AXqdQkozsCHHL2NmxRiShyLCX4VBKzH8j5kDNGeSL
uiICbj1Tufh7LDuIwdOQnX9gvB6j/SF3YVqJl4DAjCs4ODYpwm+36RZjQkbwELzX
zXnDoNgjR5tXCiNdxJLuzemQy7FcDc90fEbpDX03rN7iceavBmZbZ5Tlu53fgpzd
kflD8OwfjnYa9AXh2zweC1G0ut2QU+cZcoOq5/QPtQELNqvgpAUsQtkCECTerz8S
ugriZD4Tnd4FJUgoqX+/iwCWesyWjGkotxi7aJluLtz+znNT9SgeMCoJmQARAQAB
tCdTU00gQWdlbnQgPHNzbS1hZ2VudC1zaWduZXJAYW1hem9uLmNvbT6JAj8EEwEC
ACkFAmohhG8CGy8FCQLGmIAHCwkIBwMCAQYVCAIJCgsEFgIDAQIeAQIXgAAKCRAn
hNvziNGdRnXVD/9bP0IX6aU+qur66fTWs8RLDs//6Vx93e8lH6p4W+RxL+wW7Ajc
/REB7PPgc5ohW80/LwxHP2g8cZiSK7fp9cRbXODqiVYl4mAWQNfxfGcWpBxcEsyo
UGF6oRjiibL1BcJLFJgVZ/H4pT0xNEDJNIJpRn7ZVXm0vrVVVUh4a4WFXUkspRXm
q37eIMm76p969L5SNjY+F8Ld6hjmRiRopg4f/+lf/+e6R+fofSOVE3Ip/YpPH1DR
plwQJrMk1XFjm+JTsdtqMTIKv38j7HANmUgDGLsuQNn8048n6ve8koVZLSrv9FAi
elSNsSIurLEpkLM0QPOFviagK7zB/d/zScpGquBU9dPFOoTq/sNFhnZr+PA7MAek
r4WOP8kasS3LWGn/rqqIOw/PDm2mmUaIwm4XenOe8lJFKUGp6ssUOj4PIQKwGaL/
S2xTex25ZaNQaKXv2JUmriGycpCjIaniEHz60bBN1kSgO0m0a5Yg3X9Qw+ezt51o
Pi6H6NdE0IwNzNcbJI2UvphwR9L92Br/J9ElYbHRdgmz26SZeRNTht/+zKPxk4iD
YibpQ804cPfA0mJBODwzqL5BBfVJ0/rLtQ2ymuHaqKbKEc0KuJ6vWMoH9qlMBlv5
YiZeUw5Ls2uuaxhKTUYrCE4LuUlAtNW63+/TP+ciBg1bq5H5aBn5tSCYV4kCHAQQ
AQIABgUCaiGEcQAKCRB90Jej2tf1/PUvD/43D4uSk84EFEbvxHsXazhieLpzoMql
zYcxOWjRF9+8bYq9NQlC7gYDI3xS7y0NYfNWHdPU2FFO7Obu9XhZp2gQ+NqyyVTj
GoivF2uIhM6xsE1r9ZXXMLap4xbnPTfbLgQIyXkb1Dw0VVK40yFFOHMUs0mXJN6m
/S+FP3TDcgoDxgyRsRAB0vGKPIJABtlmR9Fg0tPEZpA4kbawiEq5uBjv5Fol/ctl
jRZ51ksszlxhZd0t9/aBpe7XBHpfIlsItPVskHV6Kpc274lj+f0BVE70/1n/++FM
sxpQNuN7mdXXzMLASifVapPQGLBeHuxriHsgh+V6Arpswojy1uPgp6J8B/gQQ/B2
mebiGJrM/LwNPWj79QPPgzUFz6LqYnyhtJCWURWJjzHRSXsPWKgd98AXjkeSgUz9
8NV5p9Td1uZ0iYQ7Qlo58Ih6jfPFULnftiQuRnp/5ErhojV/zxKzjZNmB6YZ508M
nYrz5/++8LBc6uAf/Oq907CdfEkAYid8j2dFttksJbhlYVTnuo9vd4BdOovnB88V
dvyFJcFzlWsys2vrH6CGmngYKStQHEA588/d1w1E7Z4A8XJJiBKkBMZSOrWDmUjG
vihLPXNOsrpdCZTI9jlznp6OrRVP3P9fp3fXj1nJeIdMr30akz19Lze6T9jsDDWa
M98H0Sl+MxUsAg==
=TpOv
-----END PGP PUBLIC KEY BLOCK-----
`;
/** Its fingerprint, as the page prints it: 1C5B 395C BE5E 74E2 F1CA 2159 2784 DBF3 88D1 9D46. */
export const SSM_AGENT_SIGNER_FINGERPRINT = '1C5B395CBE5E74E2F1CA21592784DBF388D19D46';

/** A signer to check a package against: an ASCII-armored public key and its primary key's fingerprint. */
export interface PackageSigner {
  readonly key: string;
  readonly fingerprint: string;
}
export const SSM_AGENT_SIGNER: PackageSigner = { key: SSM_AGENT_SIGNER_KEY, fingerprint: SSM_AGENT_SIGNER_FINGERPRINT };

/** OpenPGP's CRC-24 of the armor's checksum line (RFC 4880, 6.1). */
function crc24(data: Buffer): number {
  let crc = 0xb704ce;
  for (const byte of data) {
    crc ^= byte << 16;
    for (let i = 0; i < 8; i++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= 0x1864cfb;
    }
  }
  return crc & 0xffffff;
}

/**
 * The binary key of an ASCII-armored public key block, its checksum checked (a key mistyped when pinned
 * fails here, not as a bad signature). gpgv reads binary keyrings only.
 */
export function dearmorPublicKey(armored: string): Buffer {
  const block = /-----BEGIN PGP PUBLIC KEY BLOCK-----\r?\n([\s\S]*?)-----END PGP PUBLIC KEY BLOCK-----/.exec(armored);
  if (!block) throw new PoolerPackagesError('the signer\'s key is not an ASCII-armored public key block');
  const lines = block[1]!.split(/\r?\n/);
  // Armor headers ("Version: ...") end at the first empty line.
  const body = lines.slice(lines.indexOf('') + 1).filter((l) => l !== '');
  const checksum = body.find((l) => l.startsWith('='));
  const data = Buffer.from(body.filter((l) => !l.startsWith('=')).join(''), 'base64');
  if (checksum === undefined || Buffer.from(checksum.slice(1), 'base64').readUIntBE(0, 3) !== crc24(data)) {
    throw new PoolerPackagesError('the signer\'s key fails its armor checksum');
  }
  return data;
}

/**
 * Checks `sig`, a detached signature of `file`, with gpgv against `signer` alone (a keyring of that one
 * key, no keyring or agent of the machine's): it passes only with a good signature (GOODSIG: not an
 * expired or revoked key) whose primary key has the pinned fingerprint (VALIDSIG).
 */
export function verifySsmAgentSignature(file: string, sig: string, signer: PackageSigner = SSM_AGENT_SIGNER): void {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-ssm-agent-gpgv-'));
  try {
    const keyring = path.join(home, 'signer.gpg');
    fs.writeFileSync(keyring, dearmorPublicKey(signer.key));
    const run = spawnSync('gpgv', ['--homedir', home, '--status-fd', '1', '--keyring', keyring, sig, file], { encoding: 'utf8' });
    if (run.error) throw new PoolerPackagesError(`gpgv cannot run (${run.error.message}): install gpgv (the SSM Agent's signature is checked with it), or check the package as AWS documents and set SSM_AGENT_DEB=<its path>`);
    const status = run.stdout.split('\n');
    const validsig = status.find((l) => l.startsWith('[GNUPG:] VALIDSIG '))?.split(' ');
    const good = status.some((l) => l.startsWith('[GNUPG:] GOODSIG '));
    if (run.status === 0 && good && validsig !== undefined && validsig[validsig.length - 1] === signer.fingerprint) return;
    const noKey = status.find((l) => l.startsWith('[GNUPG:] NO_PUBKEY '))?.split(' ')[2];
    const why = noKey !== undefined
      ? `it is signed by key ${noKey}, not by ${signer.fingerprint} (if AWS has published a new key on verify-agent-signature.html, pin it in lib/packaging/ssm-agent.ts)`
      : (run.stderr.trim().split('\n').filter((l) => l !== '').pop() ?? `gpgv exited ${run.status}`);
    throw new PoolerPackagesError(`${file} fails its signature ${sig}: ${why}`);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** What dpkg-deb reads of a package's control file. */
export interface DebianPackageFields {
  readonly package: string;
  readonly version: string;
  readonly architecture: string;
}

/**
 * The package's name, version and architecture (`dpkg-deb --field`), refusing a file that is not AWS's
 * SSM Agent for Debian `architecture` (the hosts' arm64 unless given): not a Debian package, another
 * package, or another architecture.
 */
export function checkSsmAgentDeb(file: string, architecture: string = SSM_AGENT_ARCHITECTURE): DebianPackageFields {
  const give = `give AWS's SSM Agent for Debian ${architecture} (${ssmAgentDebUrl('<region>', architecture)})`;
  let out: string;
  try {
    out = execFileSync('dpkg-deb', ['--field', file, 'Package', 'Version', 'Architecture'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim().split('\n').filter((l) => l !== '').pop();
    throw new PoolerPackagesError(`${file} is not a Debian package (${stderr ?? (err as Error).message}): ${give}`);
  }
  const field = (name: string) => out.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2).trim() ?? '';
  const fields = { package: field('Package'), version: field('Version'), architecture: field('Architecture') };
  if (fields.package !== SSM_AGENT_PACKAGE || fields.architecture !== architecture) {
    throw new PoolerPackagesError(`${file} is the package ${fields.package || '(unnamed)'} for ${fields.architecture || '(no architecture)'}, not ${SSM_AGENT_PACKAGE} for ${architecture}: ${give}`);
  }
  return fields;
}

/** The file name apt would give the package (name_version_architecture.deb; an epoch's colon as %3a). */
export function debianFileName(fields: DebianPackageFields): string {
  return `${fields.package}_${fields.version.replace(/:/g, '%3a')}_${fields.architecture}.deb`;
}

/**
 * The rehearsal's stand-in for AWS's SSM Agent, which cannot be fetched or run here (no AWS to register
 * with): a package of the kit's own that declares what it is, installs nothing, and takes the agent's
 * place in the rehearsal's packages object only. `rehearse up` lists it among the stand-ins.
 */
export const SSM_AGENT_STANDIN_PACKAGE = 'apk-rehearsal-ssm-agent-standin';

/** Builds the stand-in package for `architecture` into `dir`; returns its path. */
export function buildSsmAgentStandIn(dir: string, architecture: string): string {
  const tree = fs.mkdtempSync(path.join(dir, '.standin-'));
  try {
    fs.mkdirSync(path.join(tree, 'DEBIAN'), { recursive: true });
    fs.writeFileSync(
      path.join(tree, 'DEBIAN', 'control'),
      [
        `Package: ${SSM_AGENT_STANDIN_PACKAGE}`,
        'Version: 1.0',
        `Architecture: ${architecture}`,
        'Maintainer: aurora-proxy-kit <noreply@aurora-proxy-kit.invalid>',
        'Section: admin',
        'Priority: optional',
        `Description: stand-in for ${SSM_AGENT_PACKAGE} on the rehearsal`,
        ` The rehearsal's packages object carries this instead of AWS's SSM Agent, which needs`,
        ' AWS to register with: Session Manager is not rehearsed. It installs nothing.',
        '',
      ].join('\n'),
    );
    const out = path.join(dir, `${SSM_AGENT_STANDIN_PACKAGE}_1.0_${architecture}.deb`);
    execFileSync('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', tree, out], { stdio: ['ignore', 'ignore', 'pipe'] });
    return out;
  } finally {
    fs.rmSync(tree, { recursive: true, force: true });
  }
}
