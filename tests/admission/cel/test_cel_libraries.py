"""The Kubernetes CEL libraries: results and error texts, one table row per behaviour.

Expected values and messages are the ones documented in (or produced by) the upstream
libraries in k8s.io/apiserver/pkg/cel/library.
"""

from __future__ import annotations

import pytest

from admission import cel

ENV = cel.Environment({"object": cel.DYN, "authorizer": cel.AUTHORIZER})
DATA = {
    "object": {"spec": {"memory": cel.quantity("40Gi"), "names": ["a", "b"], "empty": []}},
    "authorizer": cel.authorizer_for("alice", ["devs"]),
}


def evaluate(expression: str):
    return ENV.compile(expression).evaluate(DATA)


RESULTS = [
    # quantity
    ("quantity parses decimal SI and compares across suffixes", "quantity('200M').compareTo(quantity('0.2G'))", 0),
    ("quantity orders 50M below 50Mi", "quantity('50M').compareTo(quantity('50Mi'))", -1),
    ("quantity isGreaterThan compares binary suffixes", "quantity('150Mi').isGreaterThan(quantity('100Mi'))", True),
    ("quantity isLessThan is false for a larger receiver", "quantity('100M').isLessThan(quantity('50M'))", False),
    ("quantity add of two quantities", "quantity('50k').add(quantity('20k')) == quantity('70k')", True),
    ("quantity add of an integer", "quantity('50k').add(20) == quantity('50020')", True),
    ("quantity sub chain from the upstream docs", "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", True),
    ("quantity equality ignores the notation", "quantity('1000m') == quantity('1')", True),
    ("quantity asInteger of 50k", "quantity('50k').asInteger()", 50000),
    ("quantity isInteger of a huge value is false", "quantity('9999999999999999999999999999999999999G').isInteger()", False),
    ("quantity isInteger of a fraction is false", "quantity('1500m').isInteger()", False),
    ("quantity asApproximateFloat after sub", "quantity('50k').sub(20000).asApproximateFloat()", 30000.0),
    ("quantity sign of a negative value", "quantity('-5').sign()", -1),
    ("quantity below nano rounds up", "quantity('0.1n') == quantity('1n')", True),
    ("quantity decimal exponent", "quantity('1e3') == quantity('1k')", True),
    ("quantity mul by an integer", "quantity('2Gi').mul(2) == quantity('4Gi')", True),
    ("isQuantity accepts 1.3Gi", "isQuantity('1.3Gi')", True),
    ("isQuantity refuses an upper-case K", "isQuantity('200K')", False),
    ("isQuantity refuses a comma", "isQuantity('1,3G')", False),
    ("isQuantity refuses a bare suffix", "isQuantity('Mi')", False),
    ("quantity from the activation compares with a literal", "object.spec.memory.compareTo(quantity('40960Mi'))", 0),
    # url
    ("url getScheme", "url('https://example.com/').getScheme()", "https"),
    ("url getScheme of an absolute path is empty", "url('/path').getScheme()", ""),
    ("url getHost keeps the port", "url('https://example.com:80/').getHost()", "example.com:80"),
    ("url getHost keeps IPv6 brackets", "url('https://[::1]:80/').getHost()", "[::1]:80"),
    ("url getHostname drops IPv6 brackets", "url('https://[::1]:80/').getHostname()", "::1"),
    ("url getHostname drops the port", "url('https://127.0.0.1:80/').getHostname()", "127.0.0.1"),
    ("url getPort", "url('https://example.com:80/').getPort()", "80"),
    ("url getPort without a port is empty", "url('https://example.com/').getPort()", ""),
    ("url getEscapedPath escapes spaces", "url('https://example.com/path with spaces/').getEscapedPath()", "/path%20with%20spaces/"),
    ("url getEscapedPath without a path is empty", "url('https://example.com').getEscapedPath()", ""),
    ("url getQuery groups repeated keys", "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", {"k1": ["a"], "k2": ["b", "c"]}),
    ("url getQuery unescapes keys and values", "url('https://example.com/path?key with spaces=value with spaces').getQuery()", {"key with spaces": ["value with spaces"]}),
    ("url getQuery of an empty query is empty", "url('https://example.com/path?').getQuery()", {}),
    ("url keeps the fragment out of the path", "url('https://example.com/p#frag').getEscapedPath()", "/p"),
    ("isURL accepts userinfo, port, query and fragment", "isURL('https://user:pass@example.com:80/path?query=val#fragment')", True),
    ("isURL accepts an absolute path", "isURL('/absolute-path')", True),
    ("isURL refuses a bad port", "isURL('https://a:b:c/')", False),
    ("isURL refuses a relative path", "isURL('../relative-path')", False),
    # ip
    ("ip family of IPv4", "ip('127.0.0.1').family()", 4),
    ("ip family of IPv6", "ip('::1').family()", 6),
    ("ip isUnspecified of 0.0.0.0", "ip('0.0.0.0').isUnspecified()", True),
    ("ip isUnspecified of ::", "ip('::').isUnspecified()", True),
    ("ip isLoopback of 127.0.0.1", "ip('127.0.0.1').isLoopback()", True),
    ("ip isLoopback of a global IPv6", "ip('2001:db8::abcd').isLoopback()", False),
    ("ip isLinkLocalMulticast of 224.0.0.1", "ip('224.0.0.1').isLinkLocalMulticast()", True),
    ("ip isLinkLocalMulticast of 224.0.1.1", "ip('224.0.1.1').isLinkLocalMulticast()", False),
    ("ip isLinkLocalMulticast of ff02::1", "ip('ff02::1').isLinkLocalMulticast()", True),
    ("ip isLinkLocalUnicast of 169.254.169.254", "ip('169.254.169.254').isLinkLocalUnicast()", True),
    ("ip isLinkLocalUnicast of fe80::1", "ip('fe80::1').isLinkLocalUnicast()", True),
    ("ip isLinkLocalUnicast of fd80::1", "ip('fd80::1').isLinkLocalUnicast()", False),
    ("ip isGlobalUnicast of a private address", "ip('192.168.0.1').isGlobalUnicast()", True),
    ("ip isGlobalUnicast of the broadcast address", "ip('255.255.255.255').isGlobalUnicast()", False),
    ("ip isGlobalUnicast of multicast IPv6", "ip('ff00::1').isGlobalUnicast()", False),
    ("ip equality compares addresses", "ip('2001:db8::1') == ip('2001:0db8::0001')", True),
    ("string of an ip is canonical", "string(ip('2001:DB8::0:0:0:ABCD'))", "2001:db8::abcd"),
    ("ip.isCanonical of a canonical IPv6", "ip.isCanonical('2001:db8::abcd')", True),
    ("ip.isCanonical of upper-case IPv6", "ip.isCanonical('2001:DB8::ABCD')", False),
    ("ip.isCanonical of expanded zeros", "ip.isCanonical('2001:db8::0:0:0:abcd')", False),
    ("isIP refuses 256", "isIP('127.0.0.256')", False),
    ("isIP refuses :::1", "isIP(':::1')", False),
    ("isIP refuses an IPv4-mapped address", "isIP('::ffff:1.2.3.4')", False),
    ("isIP refuses a zone", "isIP('fe80::1%eth0')", False),
    ("isIP refuses octal-looking octets", "isIP('010.0.0.1')", False),
    # cidr
    ("cidr containsIP of an ip", "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", True),
    ("cidr containsIP outside the prefix", "cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))", False),
    ("cidr containsIP of a string", "cidr('192.168.0.0/24').containsIP('192.168.0.1')", True),
    ("cidr containsIP of the other family is false", "cidr('::/0').containsIP('1.2.3.4')", False),
    ("cidr containsCIDR of a narrower prefix", "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))", True),
    ("cidr containsCIDR of a sibling prefix", "cidr('192.168.1.0/24').containsCIDR('192.168.2.0/24')", False),
    ("cidr containsCIDR of a wider prefix is false", "cidr('192.168.0.0/24').containsCIDR('192.168.0.0/16')", False),
    ("cidr ip keeps host bits", "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", True),
    ("cidr masked clears host bits", "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", True),
    ("cidr with host bits differs from its masked form", "cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", False),
    ("cidr prefixLength", "cidr('::1/128').prefixLength()", 128),
    ("isCIDR refuses /33", "isCIDR('192.168.0.0/33')", False),
    ("isCIDR refuses /129", "isCIDR('::1/129')", False),
    ("isCIDR refuses leading zeros in the bits", "isCIDR('10.0.0.0/08')", False),
    # regex
    ("find returns the first match", "'abc 123'.find('[0-9]+')", "123"),
    ("find without a match is empty", "'abc 123'.find('xyz')", ""),
    ("findAll returns every match", "'123 abc 456'.findAll('[0-9]+')", ["123", "456"]),
    ("findAll with a limit", "'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
    ("findAll skips empty matches after a match, as Go does", "'12 a'.findAll('[0-9]*')", ["12", "", ""]),
    ("findAll without a match is empty", "'123 abc 456'.findAll('xyz')", []),
    # lists
    ("isSorted of ascending ints", "[1, 2, 3].isSorted()", True),
    ("isSorted with duplicates", "['a', 'b', 'b', 'c'].isSorted()", True),
    ("isSorted of descending doubles", "[2.0, 1.0].isSorted()", False),
    ("isSorted of an empty list", "[].isSorted()", True),
    ("sum of ints", "[1, 3].sum()", 4),
    ("sum of doubles", "[1.0, 3.0].sum()", 4.0),
    ("sum of an empty list", "object.spec.empty.sum()", 0),
    ("min of ints", "[1, 3].min()", 1),
    ("max of ints", "[1, 3].max()", 3),
    ("max of strings", "object.spec.names.max()", "b"),
    ("indexOf finds the first", "[1, 2, 2, 3].indexOf(2)", 1),
    ("lastIndexOf finds the last", "['a', 'b', 'b', 'c'].lastIndexOf('b')", 2),
    ("indexOf of a missing double", "[1.0].indexOf(1.1)", -1),
    ("indexOf compares numbers across types", "[1, 2].indexOf(2.0)", 1),
    ("indexOf does not equate true and 1", "[1].indexOf(true)", -1),
    ("string indexOf still works beside the list one", "'abcb'.indexOf('b')", 1),
    # sets
    ("sets.contains of a subset", "sets.contains([1, 2, 3], [3, 2])", True),
    ("sets.contains of a missing element", "sets.contains([1, 2], [4])", False),
    ("sets.equivalent ignores order and duplicates", "sets.equivalent([1, 2, 2], [2, 1])", True),
    ("sets.intersects", "sets.intersects([1, 2], [2, 5])", True),
    # semver
    ("semver compareTo equal", "semver('1.2.3').compareTo(semver('1.2.3'))", 0),
    ("semver compareTo lower", "semver('1.2.3').compareTo(semver('2.0.0'))", -1),
    ("semver prerelease is lower than the release", "semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", True),
    ("semver numeric prerelease parts sort numerically", "semver('1.0.0-alpha.2').isLessThan(semver('1.0.0-alpha.10'))", True),
    ("semver equality ignores build metadata", "semver('1.0.0+build.1') == semver('1.0.0+build.2')", True),
    ("semver isGreaterThan", "semver('1.2.3').isGreaterThan(semver('0.1.2'))", True),
    ("semver major", "semver('1.2.3').major()", 1),
    ("semver minor", "semver('1.2.3').minor()", 2),
    ("semver patch", "semver('1.2.3').patch()", 3),
    ("semver normalize drops the v", "semver('v1.0.0', true) == semver('1.0.0')", True),
    ("semver normalize pads the patch", "semver('1.0', true) == semver('1.0.0')", True),
    ("semver normalize strips leading zeros", "semver('01.01.01', true) == semver('1.1.1')", True),
    ("isSemver refuses a leading v", "isSemver('v1.0')", False),
    ("isSemver with normalize accepts a leading v", "isSemver('v1.0', true)", True),
    ("isSemver refuses a word", "isSemver('hello')", False),
    # jsonpatch
    ("jsonpatch.escapeKey escapes / and ~", "'/metadata/labels/' + jsonpatch.escapeKey('k8s.io/my~label')", "/metadata/labels/k8s.io~1my~0label"),
    # authorizer
    ("authorizer resource check is allowed for everyone until RBAC exists",
     "authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('delete').allowed()", True),
    ("authorizer path check is allowed", "authorizer.path('/healthz').check('get').allowed()", True),
    ("authorizer decision has an empty reason", "authorizer.group('').resource('pods').check('get').reason()", ""),
    ("authorizer decision is not errored", "authorizer.group('').resource('pods').check('get').errored()", False),
    ("authorizer serviceAccount check", "authorizer.serviceAccount('ns', 'sa').group('').resource('pods').subresource('log').check('get').allowed()", True),
    # cel extensions Kubernetes enables
    ("strings format", "'%s has %d items'.format(['list', 3])", "list has 3 items"),
    ("optional chaining with orValue", "object.?spec.?missing.orValue('none')", "none"),
    ("cel.bind", "cel.bind(n, object.spec.names, n.size() * 2)", 4),
    ("strings lowerAscii and split", "'A,B'.lowerAscii().split(',')", ["a", "b"]),
]


@pytest.mark.parametrize("expression,expected", [r[1:] for r in RESULTS], ids=[r[0] for r in RESULTS])
def test_library_function_result(expression, expected):
    result = evaluate(expression)
    assert result == expected
    assert type(result) is type(expected)


ERRORS = [
    ("quantity with an upper-case K fails on its suffix", "quantity('200K')", "unable to parse quantity's suffix"),
    ("quantity of a word fails the format", "quantity('Three')",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("quantity asInteger overflow", "quantity('9999999999999999999999999999999999999G').asInteger()", "cannot convert value to integer"),
    ("url of a relative path", "url('../relative-path')",
     'URL parse error during conversion from string: parse "../relative-path": invalid URI for request'),
    ("url with a bad port", "url('https://a:b:c/')",
     'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host'),
    ("ip with an octet over 255", "ip('127.0.0.256')",
     'IP Address "127.0.0.256" parse error during conversion from string: ParseAddr("127.0.0.256"): IPv4 field has value >255'),
    ("ip with a leading zero", "ip('010.0.0.1')",
     'IP Address "010.0.0.1" parse error during conversion from string: ParseAddr("010.0.0.1"): IPv4 field has octet with leading zero'),
    ("ip with a zone", "ip('fe80::1%eth0')", 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ("ip IPv4-mapped", "ip('::ffff:1.2.3.4')", 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ("ip of a word", "ip('foo')",
     'IP Address "foo" parse error during conversion from string: ParseAddr("foo"): unable to parse IP'),
    ("cidr with a prefix too long", "cidr('192.168.0.0/33')",
     'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/33"): prefix length out of range'),
    ("cidr without a slash", "cidr('10.0.0.0')",
     'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0"): no \'/\''),
    ("min of an empty list", "object.spec.empty.min()", "min called on empty list"),
    ("max of an empty list", "object.spec.empty.max()", "max called on empty list"),
    ("isSorted of mixed types", "[1, 'a'].isSorted()", "no such overload"),
    ("sum overflowing int64", "[9223372036854775807, 1].sum()", "integer overflow"),
    ("semver with two parts", "semver('1.2')", "No Major.Minor.Patch elements found"),
    ("semver with a leading zero", "semver('01.2.3')", 'Major number must not contain leading zeroes "01"'),
    ("semver with a bad prerelease", "semver('1.2.3-al$pha')", 'Invalid character(s) found in prerelease "al$pha"'),
    ("semver compared with a quantity", "semver('1.2.3').compareTo(quantity('1'))", "no such overload"),
    ("regex that does not compile", "'abc'.find('(')", "Illegal regex: error parsing regexp: missing ), unterminated subpattern at position 0"),
]


@pytest.mark.parametrize("expression,message", [r[1:] for r in ERRORS], ids=[r[0] for r in ERRORS])
def test_library_function_error(expression, message):
    with pytest.raises(cel.EvalError) as raised:
        evaluate(expression)
    assert raised.value.message == message
