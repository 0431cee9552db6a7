import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { blockedHost, blockedRange, outboundUrlProblem } from './address-policy.ts';

describe('outbound address policy', () => {
  test('refuses every non-public address class', () => {
    const refused: Record<string, string[]> = {
      loopback: ['127.0.0.1', '127.255.255.254', '::1'],
      'RFC 1918': ['10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1'],
      'link-local': ['169.254.0.1', 'fe80::1', 'fe80::1%eth0'],
      'cloud metadata': ['169.254.169.254', 'fd00:ec2::254', '168.63.129.16', '100.100.100.200'],
      CGNAT: ['100.64.0.1', '100.127.255.255'],
      multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1'],
      'unspecified and broadcast': ['0.0.0.0', '0.1.2.3', '255.255.255.255', '::'],
      reserved: [
        '240.0.0.1',
        '192.0.0.8',
        '192.0.2.1',
        '198.18.0.1',
        '198.51.100.1',
        '203.0.113.1',
        '2001:db8::1',
      ],
      'unique-local IPv6': ['fc00::1', 'fd12:3456::1'],
      'IPv4-mapped IPv6': ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254'],
      'IPv4-compatible and NAT64 forms': ['::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b:1::a00:1'],
      'tunnels embedding IPv4': ['2002:7f00:1::1', '2001:0:4136:e378::1'],
      'site-local IPv6': ['fec0::1'],
      'not an address': ['example.com', ''],
    };
    for (const [kind, addresses] of Object.entries(refused)) {
      for (const address of addresses) assert.notEqual(blockedRange(address), null, `${kind}: ${address}`);
    }
  });

  test('allows public unicast addresses, and the IPv4-mapped form of a public one', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '2606:4700:4700::1111',
      '2a00:1450:4001::200e',
      '::ffff:8.8.8.8',
    ])
      assert.equal(blockedRange(address), null, address);
  });

  test('checks URL hosts before any connection', () => {
    assert.equal(blockedHost('hooks.example.com'), null);
    assert.equal(blockedHost('[::1]'), 'loopback');
    for (const host of [
      'localhost',
      'api.localhost',
      'LOCALHOST.',
      'metadata.google.internal',
      'printer.local',
    ])
      assert.notEqual(blockedHost(host), null, host);
    const strict = { allowPrivate: false };
    assert.equal(outboundUrlProblem('https://hooks.example.com/x?y=1', strict), null);
    assert.match(String(outboundUrlProblem('http://hooks.example.com/', strict)), /https/);
    assert.match(String(outboundUrlProblem('https://u:p@hooks.example.com/', strict)), /credentials/);
    assert.match(String(outboundUrlProblem('/relative', strict)), /absolute/);
    // The URL parser normalises decimal and hex hosts to dotted quads first.
    for (const url of [
      'https://2130706433/',
      'https://0x7f.1/',
      'https://127.1/',
      'https://[::ffff:127.0.0.1]/',
    ])
      assert.match(String(outboundUrlProblem(url, strict)), /private or internal/, url);
    const open = { allowPrivate: true };
    assert.equal(outboundUrlProblem('http://127.0.0.1:8080/hook', open), null);
    assert.match(String(outboundUrlProblem('ftp://127.0.0.1/', open)), /https or http/);
  });
});
