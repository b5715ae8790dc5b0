package spacegroup

// settingTable lists the 530 Hall settings of the 230 space-group types in
// the order of the International Tables for Crystallography, Vol. A, and of
// Hall's list (S. R. Hall, Acta Cryst. A37, 517 (1981); ITB §1.4 Table
// A1.4.2.7), one per line, fields separated by "|":
//
//	ITA number | Hall symbol | Hermann–Mauguin symbol(s) of the setting
//	("=" separates the type's symbol from the setting's, as ITA writes
//	them) | full HM symbol | short HM symbol | setting choice (unique axis
//	and cell choice "b1", axis permutation "cab", origin choice "1"/"2",
//	"H"/"R" axes) | Schoenflies symbol
//
// The operations are not listed: they are generated from the Hall symbol
// (ParseHall) and checked against the group orders of ITA in the tests.
const settingTable = `
1|P 1|P 1|P 1|P1||C1^1
2|-P 1|P -1|P -1|P-1||Ci^1
3|P 2y|P 2 = P 1 2 1|P 1 2 1|P2|b|C2^1
3|P 2|P 2 = P 1 1 2|P 1 1 2|P2|c|C2^1
3|P 2x|P 2 = P 2 1 1|P 2 1 1|P2|a|C2^1
4|P 2yb|P 2_1 = P 1 2_1 1|P 1 2_1 1|P2_1|b|C2^2
4|P 2c|P 2_1 = P 1 1 2_1|P 1 1 2_1|P2_1|c|C2^2
4|P 2xa|P 2_1 = P 2_1 1 1|P 2_1 1 1|P2_1|a|C2^2
5|C 2y|C 2 = C 1 2 1|C 1 2 1|C2|b1|C2^3
5|A 2y|C 2 = A 1 2 1|A 1 2 1|C2|b2|C2^3
5|I 2y|C 2 = I 1 2 1|I 1 2 1|C2|b3|C2^3
5|A 2|C 2 = A 1 1 2|A 1 1 2|C2|c1|C2^3
5|B 2|C 2 = B 1 1 2 = B 2|B 1 1 2|C2|c2|C2^3
5|I 2|C 2 = I 1 1 2|I 1 1 2|C2|c3|C2^3
5|B 2x|C 2 = B 2 1 1|B 2 1 1|C2|a1|C2^3
5|C 2x|C 2 = C 2 1 1|C 2 1 1|C2|a2|C2^3
5|I 2x|C 2 = I 2 1 1|I 2 1 1|C2|a3|C2^3
6|P -2y|P m = P 1 m 1|P 1 m 1|Pm|b|Cs^1
6|P -2|P m = P 1 1 m|P 1 1 m|Pm|c|Cs^1
6|P -2x|P m = P m 1 1|P m 1 1|Pm|a|Cs^1
7|P -2yc|P c = P 1 c 1|P 1 c 1|Pc|b1|Cs^2
7|P -2yac|P c = P 1 n 1|P 1 n 1|Pc|b2|Cs^2
7|P -2ya|P c = P 1 a 1|P 1 a 1|Pc|b3|Cs^2
7|P -2a|P c = P 1 1 a|P 1 1 a|Pc|c1|Cs^2
7|P -2ab|P c = P 1 1 n|P 1 1 n|Pc|c2|Cs^2
7|P -2b|P c = P 1 1 b = P b|P 1 1 b|Pc|c3|Cs^2
7|P -2xb|P c = P b 1 1|P b 1 1|Pc|a1|Cs^2
7|P -2xbc|P c = P n 1 1|P n 1 1|Pc|a2|Cs^2
7|P -2xc|P c = P c 1 1|P c 1 1|Pc|a3|Cs^2
8|C -2y|C m = C 1 m 1|C 1 m 1|Cm|b1|Cs^3
8|A -2y|C m = A 1 m 1|A 1 m 1|Cm|b2|Cs^3
8|I -2y|C m = I 1 m 1|I 1 m 1|Cm|b3|Cs^3
8|A -2|C m = A 1 1 m|A 1 1 m|Cm|c1|Cs^3
8|B -2|C m = B 1 1 m = B m|B 1 1 m|Cm|c2|Cs^3
8|I -2|C m = I 1 1 m|I 1 1 m|Cm|c3|Cs^3
8|B -2x|C m = B m 1 1|B m 1 1|Cm|a1|Cs^3
8|C -2x|C m = C m 1 1|C m 1 1|Cm|a2|Cs^3
8|I -2x|C m = I m 1 1|I m 1 1|Cm|a3|Cs^3
9|C -2yc|C c = C 1 c 1|C 1 c 1|Cc|b1|Cs^4
9|A -2yab|C c = A 1 n 1|A 1 n 1|Cc|b2|Cs^4
9|I -2ya|C c = I 1 a 1|I 1 a 1|Cc|b3|Cs^4
9|A -2ya|C c = A 1 a 1|A 1 a 1|Cc|-b1|Cs^4
9|C -2yac|C c = C 1 n 1|C 1 n 1|Cc|-b2|Cs^4
9|I -2yc|C c = I 1 c 1|I 1 c 1|Cc|-b3|Cs^4
9|A -2a|C c = A 1 1 a|A 1 1 a|Cc|c1|Cs^4
9|B -2ab|C c = B 1 1 n|B 1 1 n|Cc|c2|Cs^4
9|I -2b|C c = I 1 1 b|I 1 1 b|Cc|c3|Cs^4
9|B -2b|C c = B 1 1 b = B b|B 1 1 b|Cc|-c1|Cs^4
9|A -2ab|C c = A 1 1 n|A 1 1 n|Cc|-c2|Cs^4
9|I -2a|C c = I 1 1 a|I 1 1 a|Cc|-c3|Cs^4
9|B -2xb|C c = B b 1 1|B b 1 1|Cc|a1|Cs^4
9|C -2xac|C c = C n 1 1|C n 1 1|Cc|a2|Cs^4
9|I -2xc|C c = I c 1 1|I c 1 1|Cc|a3|Cs^4
9|C -2xc|C c = C c 1 1|C c 1 1|Cc|-a1|Cs^4
9|B -2xab|C c = B n 1 1|B n 1 1|Cc|-a2|Cs^4
9|I -2xb|C c = I b 1 1|I b 1 1|Cc|-a3|Cs^4
10|-P 2y|P 2/m = P 1 2/m 1|P 1 2/m 1|P2/m|b|C2h^1
10|-P 2|P 2/m = P 1 1 2/m|P 1 1 2/m|P2/m|c|C2h^1
10|-P 2x|P 2/m = P 2/m 1 1|P 2/m 1 1|P2/m|a|C2h^1
11|-P 2yb|P 2_1/m = P 1 2_1/m 1|P 1 2_1/m 1|P2_1/m|b|C2h^2
11|-P 2c|P 2_1/m = P 1 1 2_1/m|P 1 1 2_1/m|P2_1/m|c|C2h^2
11|-P 2xa|P 2_1/m = P 2_1/m 1 1|P 2_1/m 1 1|P2_1/m|a|C2h^2
12|-C 2y|C 2/m = C 1 2/m 1|C 1 2/m 1|C2/m|b1|C2h^3
12|-A 2y|C 2/m = A 1 2/m 1|A 1 2/m 1|C2/m|b2|C2h^3
12|-I 2y|C 2/m = I 1 2/m 1|I 1 2/m 1|C2/m|b3|C2h^3
12|-A 2|C 2/m = A 1 1 2/m|A 1 1 2/m|C2/m|c1|C2h^3
12|-B 2|C 2/m = B 1 1 2/m = B 2/m|B 1 1 2/m|C2/m|c2|C2h^3
12|-I 2|C 2/m = I 1 1 2/m|I 1 1 2/m|C2/m|c3|C2h^3
12|-B 2x|C 2/m = B 2/m 1 1|B 2/m 1 1|C2/m|a1|C2h^3
12|-C 2x|C 2/m = C 2/m 1 1|C 2/m 1 1|C2/m|a2|C2h^3
12|-I 2x|C 2/m = I 2/m 1 1|I 2/m 1 1|C2/m|a3|C2h^3
13|-P 2yc|P 2/c = P 1 2/c 1|P 1 2/c 1|P2/c|b1|C2h^4
13|-P 2yac|P 2/c = P 1 2/n 1|P 1 2/n 1|P2/c|b2|C2h^4
13|-P 2ya|P 2/c = P 1 2/a 1|P 1 2/a 1|P2/c|b3|C2h^4
13|-P 2a|P 2/c = P 1 1 2/a|P 1 1 2/a|P2/c|c1|C2h^4
13|-P 2ab|P 2/c = P 1 1 2/n|P 1 1 2/n|P2/c|c2|C2h^4
13|-P 2b|P 2/c = P 1 1 2/b = P 2/b|P 1 1 2/b|P2/c|c3|C2h^4
13|-P 2xb|P 2/c = P 2/b 1 1|P 2/b 1 1|P2/c|a1|C2h^4
13|-P 2xbc|P 2/c = P 2/n 1 1|P 2/n 1 1|P2/c|a2|C2h^4
13|-P 2xc|P 2/c = P 2/c 1 1|P 2/c 1 1|P2/c|a3|C2h^4
14|-P 2ybc|P 2_1/c = P 1 2_1/c 1|P 1 2_1/c 1|P2_1/c|b1|C2h^5
14|-P 2yn|P 2_1/c = P 1 2_1/n 1|P 1 2_1/n 1|P2_1/c|b2|C2h^5
14|-P 2yab|P 2_1/c = P 1 2_1/a 1|P 1 2_1/a 1|P2_1/c|b3|C2h^5
14|-P 2ac|P 2_1/c = P 1 1 2_1/a|P 1 1 2_1/a|P2_1/c|c1|C2h^5
14|-P 2n|P 2_1/c = P 1 1 2_1/n|P 1 1 2_1/n|P2_1/c|c2|C2h^5
14|-P 2bc|P 2_1/c = P 1 1 2_1/b = P 2_1/b|P 1 1 2_1/b|P2_1/c|c3|C2h^5
14|-P 2xab|P 2_1/c = P 2_1/b 1 1|P 2_1/b 1 1|P2_1/c|a1|C2h^5
14|-P 2xn|P 2_1/c = P 2_1/n 1 1|P 2_1/n 1 1|P2_1/c|a2|C2h^5
14|-P 2xac|P 2_1/c = P 2_1/c 1 1|P 2_1/c 1 1|P2_1/c|a3|C2h^5
15|-C 2yc|C 2/c = C 1 2/c 1|C 1 2/c 1|C2/c|b1|C2h^6
15|-A 2yab|C 2/c = A 1 2/n 1|A 1 2/n 1|C2/c|b2|C2h^6
15|-I 2ya|C 2/c = I 1 2/a 1|I 1 2/a 1|C2/c|b3|C2h^6
15|-A 2ya|C 2/c = A 1 2/a 1|A 1 2/a 1|C2/c|-b1|C2h^6
15|-C 2yac|C 2/c = C 1 2/n 1|C 1 2/n 1|C2/c|-b2|C2h^6
15|-I 2yc|C 2/c = I 1 2/c 1|I 1 2/c 1|C2/c|-b3|C2h^6
15|-A 2a|C 2/c = A 1 1 2/a|A 1 1 2/a|C2/c|c1|C2h^6
15|-B 2ab|C 2/c = B 1 1 2/n|B 1 1 2/n|C2/c|c2|C2h^6
15|-I 2b|C 2/c = I 1 1 2/b|I 1 1 2/b|C2/c|c3|C2h^6
15|-B 2b|C 2/c = B 1 1 2/b = B 2/b|B 1 1 2/b|C2/c|-c1|C2h^6
15|-A 2ab|C 2/c = A 1 1 2/n|A 1 1 2/n|C2/c|-c2|C2h^6
15|-I 2a|C 2/c = I 1 1 2/a|I 1 1 2/a|C2/c|-c3|C2h^6
15|-B 2xb|C 2/c = B 2/b 1 1|B 2/b 1 1|C2/c|a1|C2h^6
15|-C 2xac|C 2/c = C 2/n 1 1|C 2/n 1 1|C2/c|a2|C2h^6
15|-I 2xc|C 2/c = I 2/c 1 1|I 2/c 1 1|C2/c|a3|C2h^6
15|-C 2xc|C 2/c = C 2/c 1 1|C 2/c 1 1|C2/c|-a1|C2h^6
15|-B 2xab|C 2/c = B 2/n 1 1|B 2/n 1 1|C2/c|-a2|C2h^6
15|-I 2xb|C 2/c = I 2/b 1 1|I 2/b 1 1|C2/c|-a3|C2h^6
16|P 2 2|P 2 2 2|P 2 2 2|P222||D2^1
17|P 2c 2|P 2 2 2_1|P 2 2 2_1|P222_1||D2^2
17|P 2a 2a|P 2_1 2 2|P 2_1 2 2|P2_122|cab|D2^2
17|P 2 2b|P 2 2_1 2|P 2 2_1 2|P22_12|bca|D2^2
18|P 2 2ab|P 2_1 2_1 2|P 2_1 2_1 2|P2_12_12||D2^3
18|P 2bc 2|P 2 2_1 2_1|P 2 2_1 2_1|P22_12_1|cab|D2^3
18|P 2ac 2ac|P 2_1 2 2_1|P 2_1 2 2_1|P2_122_1|bca|D2^3
19|P 2ac 2ab|P 2_1 2_1 2_1|P 2_1 2_1 2_1|P2_12_12_1||D2^4
20|C 2c 2|C 2 2 2_1|C 2 2 2_1|C222_1||D2^5
20|A 2a 2a|A 2_1 2 2|A 2_1 2 2|A2_122|cab|D2^5
20|B 2 2b|B 2 2_1 2|B 2 2_1 2|B22_12|bca|D2^5
21|C 2 2|C 2 2 2|C 2 2 2|C222||D2^6
21|A 2 2|A 2 2 2|A 2 2 2|A222|cab|D2^6
21|B 2 2|B 2 2 2|B 2 2 2|B222|bca|D2^6
22|F 2 2|F 2 2 2|F 2 2 2|F222||D2^7
23|I 2 2|I 2 2 2|I 2 2 2|I222||D2^8
24|I 2b 2c|I 2_1 2_1 2_1|I 2_1 2_1 2_1|I2_12_12_1||D2^9
25|P 2 -2|P m m 2|P m m 2|Pmm2||C2v^1
25|P -2 2|P 2 m m|P 2 m m|P2mm|cab|C2v^1
25|P -2 -2|P m 2 m|P m 2 m|Pm2m|bca|C2v^1
26|P 2c -2|P m c 2_1|P m c 2_1|Pmc2_1||C2v^2
26|P 2c -2c|P c m 2_1|P c m 2_1|Pcm2_1|ba-c|C2v^2
26|P -2a 2a|P 2_1 m a|P 2_1 m a|P2_1ma|cab|C2v^2
26|P -2 2a|P 2_1 a m|P 2_1 a m|P2_1am|-cba|C2v^2
26|P -2 -2b|P b 2_1 m|P b 2_1 m|Pb2_1m|bca|C2v^2
26|P -2b -2|P m 2_1 b|P m 2_1 b|Pm2_1b|a-cb|C2v^2
27|P 2 -2c|P c c 2|P c c 2|Pcc2||C2v^3
27|P -2a 2|P 2 a a|P 2 a a|P2aa|cab|C2v^3
27|P -2b -2b|P b 2 b|P b 2 b|Pb2b|bca|C2v^3
28|P 2 -2a|P m a 2|P m a 2|Pma2||C2v^4
28|P 2 -2b|P b m 2|P b m 2|Pbm2|ba-c|C2v^4
28|P -2b 2|P 2 m b|P 2 m b|P2mb|cab|C2v^4
28|P -2c 2|P 2 c m|P 2 c m|P2cm|-cba|C2v^4
28|P -2c -2c|P c 2 m|P c 2 m|Pc2m|bca|C2v^4
28|P -2a -2a|P m 2 a|P m 2 a|Pm2a|a-cb|C2v^4
29|P 2c -2ac|P c a 2_1|P c a 2_1|Pca2_1||C2v^5
29|P 2c -2b|P b c 2_1|P b c 2_1|Pbc2_1|ba-c|C2v^5
29|P -2b 2a|P 2_1 a b|P 2_1 a b|P2_1ab|cab|C2v^5
29|P -2ac 2a|P 2_1 c a|P 2_1 c a|P2_1ca|-cba|C2v^5
29|P -2bc -2c|P c 2_1 b|P c 2_1 b|Pc2_1b|bca|C2v^5
29|P -2a -2ab|P b 2_1 a|P b 2_1 a|Pb2_1a|a-cb|C2v^5
30|P 2 -2bc|P n c 2|P n c 2|Pnc2||C2v^6
30|P 2 -2ac|P c n 2|P c n 2|Pcn2|ba-c|C2v^6
30|P -2ac 2|P 2 n a|P 2 n a|P2na|cab|C2v^6
30|P -2ab 2|P 2 a n|P 2 a n|P2an|-cba|C2v^6
30|P -2ab -2ab|P b 2 n|P b 2 n|Pb2n|bca|C2v^6
30|P -2bc -2bc|P n 2 b|P n 2 b|Pn2b|a-cb|C2v^6
31|P 2ac -2|P m n 2_1|P m n 2_1|Pmn2_1||C2v^7
31|P 2bc -2bc|P n m 2_1|P n m 2_1|Pnm2_1|ba-c|C2v^7
31|P -2ab 2ab|P 2_1 m n|P 2_1 m n|P2_1mn|cab|C2v^7
31|P -2 2ac|P 2_1 n m|P 2_1 n m|P2_1nm|-cba|C2v^7
31|P -2 -2bc|P n 2_1 m|P n 2_1 m|Pn2_1m|bca|C2v^7
31|P -2ab -2|P m 2_1 n|P m 2_1 n|Pm2_1n|a-cb|C2v^7
32|P 2 -2ab|P b a 2|P b a 2|Pba2||C2v^8
32|P -2bc 2|P 2 c b|P 2 c b|P2cb|cab|C2v^8
32|P -2ac -2ac|P c 2 a|P c 2 a|Pc2a|bca|C2v^8
33|P 2c -2n|P n a 2_1|P n a 2_1|Pna2_1||C2v^9
33|P 2c -2ab|P b n 2_1|P b n 2_1|Pbn2_1|ba-c|C2v^9
33|P -2bc 2a|P 2_1 n b|P 2_1 n b|P2_1nb|cab|C2v^9
33|P -2n 2a|P 2_1 c n|P 2_1 c n|P2_1cn|-cba|C2v^9
33|P -2n -2ac|P c 2_1 n|P c 2_1 n|Pc2_1n|bca|C2v^9
33|P -2ac -2n|P n 2_1 a|P n 2_1 a|Pn2_1a|a-cb|C2v^9
34|P 2 -2n|P n n 2|P n n 2|Pnn2||C2v^10
34|P -2n 2|P 2 n n|P 2 n n|P2nn|cab|C2v^10
34|P -2n -2n|P n 2 n|P n 2 n|Pn2n|bca|C2v^10
35|C 2 -2|C m m 2|C m m 2|Cmm2||C2v^11
35|A -2 2|A 2 m m|A 2 m m|A2mm|cab|C2v^11
35|B -2 -2|B m 2 m|B m 2 m|Bm2m|bca|C2v^11
36|C 2c -2|C m c 2_1|C m c 2_1|Cmc2_1||C2v^12
36|C 2c -2c|C c m 2_1|C c m 2_1|Ccm2_1|ba-c|C2v^12
36|A -2a 2a|A 2_1 m a|A 2_1 m a|A2_1ma|cab|C2v^12
36|A -2 2a|A 2_1 a m|A 2_1 a m|A2_1am|-cba|C2v^12
36|B -2 -2b|B b 2_1 m|B b 2_1 m|Bb2_1m|bca|C2v^12
36|B -2b -2|B m 2_1 b|B m 2_1 b|Bm2_1b|a-cb|C2v^12
37|C 2 -2c|C c c 2|C c c 2|Ccc2||C2v^13
37|A -2a 2|A 2 a a|A 2 a a|A2aa|cab|C2v^13
37|B -2b -2b|B b 2 b|B b 2 b|Bb2b|bca|C2v^13
38|A 2 -2|A m m 2|A m m 2|Amm2||C2v^14
38|B 2 -2|B m m 2|B m m 2|Bmm2|ba-c|C2v^14
38|B -2 2|B 2 m m|B 2 m m|B2mm|cab|C2v^14
38|C -2 2|C 2 m m|C 2 m m|C2mm|-cba|C2v^14
38|C -2 -2|C m 2 m|C m 2 m|Cm2m|bca|C2v^14
38|A -2 -2|A m 2 m|A m 2 m|Am2m|a-cb|C2v^14
39|A 2 -2b|A e m 2|A e m 2|Aem2||C2v^15
39|B 2 -2a|B m e 2|B m e 2|Bme2|ba-c|C2v^15
39|B -2a 2|B 2 e m|B 2 e m|B2em|cab|C2v^15
39|C -2a 2|C 2 m e|C 2 m e|C2me|-cba|C2v^15
39|C -2a -2a|C m 2 e|C m 2 e|Cm2e|bca|C2v^15
39|A -2b -2b|A e 2 m|A e 2 m|Ae2m|a-cb|C2v^15
40|A 2 -2a|A m a 2|A m a 2|Ama2||C2v^16
40|B 2 -2b|B b m 2|B b m 2|Bbm2|ba-c|C2v^16
40|B -2b 2|B 2 m b|B 2 m b|B2mb|cab|C2v^16
40|C -2c 2|C 2 c m|C 2 c m|C2cm|-cba|C2v^16
40|C -2c -2c|C c 2 m|C c 2 m|Cc2m|bca|C2v^16
40|A -2a -2a|A m 2 a|A m 2 a|Am2a|a-cb|C2v^16
41|A 2 -2ab|A e a 2|A e a 2|Aea2||C2v^17
41|B 2 -2ab|B b e 2|B b e 2|Bbe2|ba-c|C2v^17
41|B -2ab 2|B 2 e b|B 2 e b|B2eb|cab|C2v^17
41|C -2ac 2|C 2 c e|C 2 c e|C2ce|-cba|C2v^17
41|C -2ac -2ac|C c 2 e|C c 2 e|Cc2e|bca|C2v^17
41|A -2ab -2ab|A e 2 a|A e 2 a|Ae2a|a-cb|C2v^17
42|F 2 -2|F m m 2|F m m 2|Fmm2||C2v^18
42|F -2 2|F 2 m m|F 2 m m|F2mm|cab|C2v^18
42|F -2 -2|F m 2 m|F m 2 m|Fm2m|bca|C2v^18
43|F 2 -2d|F d d 2|F d d 2|Fdd2||C2v^19
43|F -2d 2|F 2 d d|F 2 d d|F2dd|cab|C2v^19
43|F -2d -2d|F d 2 d|F d 2 d|Fd2d|bca|C2v^19
44|I 2 -2|I m m 2|I m m 2|Imm2||C2v^20
44|I -2 2|I 2 m m|I 2 m m|I2mm|cab|C2v^20
44|I -2 -2|I m 2 m|I m 2 m|Im2m|bca|C2v^20
45|I 2 -2c|I b a 2|I b a 2|Iba2||C2v^21
45|I -2a 2|I 2 c b|I 2 c b|I2cb|cab|C2v^21
45|I -2b -2b|I c 2 a|I c 2 a|Ic2a|bca|C2v^21
46|I 2 -2a|I m a 2|I m a 2|Ima2||C2v^22
46|I 2 -2b|I b m 2|I b m 2|Ibm2|ba-c|C2v^22
46|I -2b 2|I 2 m b|I 2 m b|I2mb|cab|C2v^22
46|I -2c 2|I 2 c m|I 2 c m|I2cm|-cba|C2v^22
46|I -2c -2c|I c 2 m|I c 2 m|Ic2m|bca|C2v^22
46|I -2a -2a|I m 2 a|I m 2 a|Im2a|a-cb|C2v^22
47|-P 2 2|P m m m|P 2/m 2/m 2/m|Pmmm||D2h^1
48|P 2 2 -1n|P n n n|P 2/n 2/n 2/n|Pnnn|1|D2h^2
48|-P 2ab 2bc|P n n n|P 2/n 2/n 2/n|Pnnn|2|D2h^2
49|-P 2 2c|P c c m|P 2/c 2/c 2/m|Pccm||D2h^3
49|-P 2a 2|P m a a|P 2/m 2/a 2/a|Pmaa|cab|D2h^3
49|-P 2b 2b|P b m b|P 2/b 2/m 2/b|Pbmb|bca|D2h^3
50|P 2 2 -1ab|P b a n|P 2/b 2/a 2/n|Pban|1|D2h^4
50|-P 2ab 2b|P b a n|P 2/b 2/a 2/n|Pban|2|D2h^4
50|P 2 2 -1bc|P n c b|P 2/n 2/c 2/b|Pncb|1cab|D2h^4
50|-P 2b 2bc|P n c b|P 2/n 2/c 2/b|Pncb|2cab|D2h^4
50|P 2 2 -1ac|P c n a|P 2/c 2/n 2/a|Pcna|1bca|D2h^4
50|-P 2a 2c|P c n a|P 2/c 2/n 2/a|Pcna|2bca|D2h^4
51|-P 2a 2a|P m m a|P 2_1/m 2/m 2/a|Pmma||D2h^5
51|-P 2b 2|P m m b|P 2/m 2_1/m 2/b|Pmmb|ba-c|D2h^5
51|-P 2 2b|P b m m|P 2/b 2_1/m 2/m|Pbmm|cab|D2h^5
51|-P 2c 2c|P c m m|P 2/c 2/m 2_1/m|Pcmm|-cba|D2h^5
51|-P 2c 2|P m c m|P 2/m 2/c 2_1/m|Pmcm|bca|D2h^5
51|-P 2 2a|P m a m|P 2_1/m 2/a 2/m|Pmam|a-cb|D2h^5
52|-P 2a 2bc|P n n a|P 2/n 2_1/n 2/a|Pnna||D2h^6
52|-P 2b 2n|P n n b|P 2_1/n 2/n 2/b|Pnnb|ba-c|D2h^6
52|-P 2n 2b|P b n n|P 2/b 2/n 2_1/n|Pbnn|cab|D2h^6
52|-P 2ab 2c|P c n n|P 2/c 2_1/n 2/n|Pcnn|-cba|D2h^6
52|-P 2ab 2n|P n c n|P 2_1/n 2/c 2/n|Pncn|bca|D2h^6
52|-P 2n 2bc|P n a n|P 2/n 2/a 2_1/n|Pnan|a-cb|D2h^6
53|-P 2ac 2|P m n a|P 2/m 2/n 2_1/a|Pmna||D2h^7
53|-P 2bc 2bc|P n m b|P 2/n 2/m 2_1/b|Pnmb|ba-c|D2h^7
53|-P 2ab 2ab|P b m n|P 2_1/b 2/m 2/n|Pbmn|cab|D2h^7
53|-P 2 2ac|P c n m|P 2_1/c 2/n 2/m|Pcnm|-cba|D2h^7
53|-P 2 2bc|P n c m|P 2/n 2_1/c 2/m|Pncm|bca|D2h^7
53|-P 2ab 2|P m a n|P 2/m 2_1/a 2/n|Pman|a-cb|D2h^7
54|-P 2a 2ac|P c c a|P 2_1/c 2/c 2/a|Pcca||D2h^8
54|-P 2b 2c|P c c b|P 2/c 2_1/c 2/b|Pccb|ba-c|D2h^8
54|-P 2a 2b|P b a a|P 2/b 2_1/a 2/a|Pbaa|cab|D2h^8
54|-P 2ac 2c|P c a a|P 2/c 2/a 2_1/a|Pcaa|-cba|D2h^8
54|-P 2bc 2b|P b c b|P 2/b 2/c 2_1/b|Pbcb|bca|D2h^8
54|-P 2b 2ab|P b a b|P 2_1/b 2/a 2/b|Pbab|a-cb|D2h^8
55|-P 2 2ab|P b a m|P 2_1/b 2_1/a 2/m|Pbam||D2h^9
55|-P 2bc 2|P m c b|P 2/m 2_1/c 2_1/b|Pmcb|cab|D2h^9
55|-P 2ac 2ac|P c m a|P 2_1/c 2/m 2_1/a|Pcma|bca|D2h^9
56|-P 2ab 2ac|P c c n|P 2_1/c 2_1/c 2/n|Pccn||D2h^10
56|-P 2ac 2bc|P n a a|P 2/n 2_1/a 2_1/a|Pnaa|cab|D2h^10
56|-P 2bc 2ab|P b n b|P 2_1/b 2/n 2_1/b|Pbnb|bca|D2h^10
57|-P 2c 2b|P b c m|P 2/b 2_1/c 2_1/m|Pbcm||D2h^11
57|-P 2c 2ac|P c a m|P 2_1/c 2/a 2_1/m|Pcam|ba-c|D2h^11
57|-P 2ac 2a|P m c a|P 2_1/m 2/c 2_1/a|Pmca|cab|D2h^11
57|-P 2b 2a|P m a b|P 2_1/m 2_1/a 2/b|Pmab|-cba|D2h^11
57|-P 2a 2ab|P b m a|P 2_1/b 2_1/m 2/a|Pbma|bca|D2h^11
57|-P 2bc 2c|P c m b|P 2/c 2_1/m 2_1/b|Pcmb|a-cb|D2h^11
58|-P 2 2n|P n n m|P 2_1/n 2_1/n 2/m|Pnnm||D2h^12
58|-P 2n 2|P m n n|P 2/m 2_1/n 2_1/n|Pmnn|cab|D2h^12
58|-P 2n 2n|P n m n|P 2_1/n 2/m 2_1/n|Pnmn|bca|D2h^12
59|P 2 2ab -1ab|P m m n|P 2_1/m 2_1/m 2/n|Pmmn|1|D2h^13
59|-P 2ab 2a|P m m n|P 2_1/m 2_1/m 2/n|Pmmn|2|D2h^13
59|P 2bc 2 -1bc|P n m m|P 2/n 2_1/m 2_1/m|Pnmm|1cab|D2h^13
59|-P 2c 2bc|P n m m|P 2/n 2_1/m 2_1/m|Pnmm|2cab|D2h^13
59|P 2ac 2ac -1ac|P m n m|P 2_1/m 2/n 2_1/m|Pmnm|1bca|D2h^13
59|-P 2c 2a|P m n m|P 2_1/m 2/n 2_1/m|Pmnm|2bca|D2h^13
60|-P 2n 2ab|P b c n|P 2_1/b 2/c 2_1/n|Pbcn||D2h^14
60|-P 2n 2c|P c a n|P 2/c 2_1/a 2_1/n|Pcan|ba-c|D2h^14
60|-P 2a 2n|P n c a|P 2_1/n 2_1/c 2/a|Pnca|cab|D2h^14
60|-P 2bc 2n|P n a b|P 2_1/n 2/a 2_1/b|Pnab|-cba|D2h^14
60|-P 2ac 2b|P b n a|P 2/b 2_1/n 2_1/a|Pbna|bca|D2h^14
60|-P 2b 2ac|P c n b|P 2_1/c 2_1/n 2/b|Pcnb|a-cb|D2h^14
61|-P 2ac 2ab|P b c a|P 2_1/b 2_1/c 2_1/a|Pbca||D2h^15
61|-P 2bc 2ac|P c a b|P 2_1/c 2_1/a 2_1/b|Pcab|ba-c|D2h^15
62|-P 2ac 2n|P n m a|P 2_1/n 2_1/m 2_1/a|Pnma||D2h^16
62|-P 2bc 2a|P m n b|P 2_1/m 2_1/n 2_1/b|Pmnb|ba-c|D2h^16
62|-P 2c 2ab|P b n m|P 2_1/b 2_1/n 2_1/m|Pbnm|cab|D2h^16
62|-P 2n 2ac|P c m n|P 2_1/c 2_1/m 2_1/n|Pcmn|-cba|D2h^16
62|-P 2n 2a|P m c n|P 2_1/m 2_1/c 2_1/n|Pmcn|bca|D2h^16
62|-P 2c 2n|P n a m|P 2_1/n 2_1/a 2_1/m|Pnam|a-cb|D2h^16
63|-C 2c 2|C m c m|C 2/m 2/c 2_1/m|Cmcm||D2h^17
63|-C 2c 2c|C c m m|C 2/c 2/m 2_1/m|Ccmm|ba-c|D2h^17
63|-A 2a 2a|A m m a|A 2_1/m 2/m 2/a|Amma|cab|D2h^17
63|-A 2 2a|A m a m|A 2_1/m 2/a 2/m|Amam|-cba|D2h^17
63|-B 2 2b|B b m m|B 2/b 2_1/m 2/m|Bbmm|bca|D2h^17
63|-B 2b 2|B m m b|B 2/m 2_1/m 2/b|Bmmb|a-cb|D2h^17
64|-C 2ac 2|C m c e|C 2/m 2/c 2_1/e|Cmce||D2h^18
64|-C 2ac 2ac|C c m e|C 2/c 2/m 2_1/e|Ccme|ba-c|D2h^18
64|-A 2ab 2ab|A e m a|A 2_1/e 2/m 2/a|Aema|cab|D2h^18
64|-A 2 2ab|A e a m|A 2_1/e 2/a 2/m|Aeam|-cba|D2h^18
64|-B 2 2ab|B b e m|B 2/b 2_1/e 2/m|Bbem|bca|D2h^18
64|-B 2ab 2|B m e b|B 2/m 2_1/e 2/b|Bmeb|a-cb|D2h^18
65|-C 2 2|C m m m|C 2/m 2/m 2/m|Cmmm||D2h^19
65|-A 2 2|A m m m|A 2/m 2/m 2/m|Ammm|cab|D2h^19
65|-B 2 2|B m m m|B 2/m 2/m 2/m|Bmmm|bca|D2h^19
66|-C 2 2c|C c c m|C 2/c 2/c 2/m|Cccm||D2h^20
66|-A 2a 2|A m a a|A 2/m 2/a 2/a|Amaa|cab|D2h^20
66|-B 2b 2b|B b m b|B 2/b 2/m 2/b|Bbmb|bca|D2h^20
67|-C 2a 2|C m m e|C 2/m 2/m 2/e|Cmme||D2h^21
67|-C 2a 2a|C m m e|C 2/m 2/m 2/e|Cmme|ba-c|D2h^21
67|-A 2b 2b|A e m m|A 2/e 2/m 2/m|Aemm|cab|D2h^21
67|-A 2 2b|A e m m|A 2/e 2/m 2/m|Aemm|-cba|D2h^21
67|-B 2 2a|B m e m|B 2/m 2/e 2/m|Bmem|bca|D2h^21
67|-B 2a 2|B m e m|B 2/m 2/e 2/m|Bmem|a-cb|D2h^21
68|C 2 2 -1ac|C c c e|C 2/c 2/c 2/e|Ccce|1|D2h^22
68|-C 2a 2ac|C c c e|C 2/c 2/c 2/e|Ccce|2|D2h^22
68|C 2 2 -1ac|C c c e|C 2/c 2/c 2/e|Ccce|1ba-c|D2h^22
68|-C 2a 2c|C c c e|C 2/c 2/c 2/e|Ccce|2ba-c|D2h^22
68|A 2 2 -1ab|A e a a|A 2/e 2/a 2/a|Aeaa|1cab|D2h^22
68|-A 2a 2b|A e a a|A 2/e 2/a 2/a|Aeaa|2cab|D2h^22
68|A 2 2 -1ab|A e a a|A 2/e 2/a 2/a|Aeaa|1-cba|D2h^22
68|-A 2ab 2b|A e a a|A 2/e 2/a 2/a|Aeaa|2-cba|D2h^22
68|B 2 2 -1ab|B b e b|B 2/b 2/e 2/b|Bbeb|1bca|D2h^22
68|-B 2ab 2b|B b c b|B 2/b 2/e 2/b|Bbcb|2bca|D2h^22
68|B 2 2 -1ab|B b e b|B 2/b 2/e 2/b|Bbeb|1a-cb|D2h^22
68|-B 2b 2ab|B b e b|B 2/b 2/e 2/b|Bbeb|2a-cb|D2h^22
69|-F 2 2|F m m m|F 2/m 2/m 2/m|Fmmm||D2h^23
70|F 2 2 -1d|F d d d|F 2/d 2/d 2/d|Fddd|1|D2h^24
70|-F 2uv 2vw|F d d d|F 2/d 2/d 2/d|Fddd|2|D2h^24
71|-I 2 2|I m m m|I 2/m 2/m 2/m|Immm||D2h^25
72|-I 2 2c|I b a m|I 2/b 2/a 2/m|Ibam||D2h^26
72|-I 2a 2|I m c b|I 2/m 2/c 2/b|Imcb|cab|D2h^26
72|-I 2b 2b|I c m a|I 2/c 2/m 2/a|Icma|bca|D2h^26
73|-I 2b 2c|I b c a|I 2/b 2/c 2/a|Ibca||D2h^27
73|-I 2a 2b|I c a b|I 2/c 2/a 2/b|Icab|ba-c|D2h^27
74|-I 2b 2|I m m a|I 2/m 2/m 2/a|Imma||D2h^28
74|-I 2a 2a|I m m b|I 2/m 2/m 2/b|Immb|ba-c|D2h^28
74|-I 2c 2c|I b m m|I 2/b 2/m 2/m|Ibmm|cab|D2h^28
74|-I 2 2b|I c m m|I 2/c 2/m 2/m|Icmm|-cba|D2h^28
74|-I 2 2a|I m c m|I 2/m 2/c 2/m|Imcm|bca|D2h^28
74|-I 2c 2|I m a m|I 2/m 2/a 2/m|Imam|a-cb|D2h^28
75|P 4|P 4|P 4|P4||C4^1
76|P 4w|P 4_1|P 4_1|P4_1||C4^2
77|P 4c|P 4_2|P 4_2|P4_2||C4^3
78|P 4cw|P 4_3|P 4_3|P4_3||C4^4
79|I 4|I 4|I 4|I4||C4^5
80|I 4bw|I 4_1|I 4_1|I4_1||C4^6
81|P -4|P -4|P -4|P-4||S4^1
82|I -4|I -4|I -4|I-4||S4^2
83|-P 4|P 4/m|P 4/m|P4/m||C4h^1
84|-P 4c|P 4_2/m|P 4_2/m|P4_2/m||C4h^2
85|P 4ab -1ab|P 4/n|P 4/n|P4/n|1|C4h^3
85|-P 4a|P 4/n|P 4/n|P4/n|2|C4h^3
86|P 4n -1n|P 4_2/n|P 4_2/n|P4_2/n|1|C4h^4
86|-P 4bc|P 4_2/n|P 4_2/n|P4_2/n|2|C4h^4
87|-I 4|I 4/m|I 4/m|I4/m||C4h^5
88|I 4bw -1bw|I 4_1/a|I 4_1/a|I4_1/a|1|C4h^6
88|-I 4ad|I 4_1/a|I 4_1/a|I4_1/a|2|C4h^6
89|P 4 2|P 4 2 2|P 4 2 2|P422||D4^1
90|P 4ab 2ab|P 4 2_1 2|P 4 2_1 2|P42_12||D4^2
91|P 4w 2c|P 4_1 2 2|P 4_1 2 2|P4_122||D4^3
92|P 4abw 2nw|P 4_1 2_1 2|P 4_1 2_1 2|P4_12_12||D4^4
93|P 4c 2|P 4_2 2 2|P 4_2 2 2|P4_222||D4^5
94|P 4n 2n|P 4_2 2_1 2|P 4_2 2_1 2|P4_22_12||D4^6
95|P 4cw 2c|P 4_3 2 2|P 4_3 2 2|P4_322||D4^7
96|P 4nw 2abw|P 4_3 2_1 2|P 4_3 2_1 2|P4_32_12||D4^8
97|I 4 2|I 4 2 2|I 4 2 2|I422||D4^9
98|I 4bw 2bw|I 4_1 2 2|I 4_1 2 2|I4_122||D4^10
99|P 4 -2|P 4 m m|P 4 m m|P4mm||C4v^1
100|P 4 -2ab|P 4 b m|P 4 b m|P4bm||C4v^2
101|P 4c -2c|P 4_2 c m|P 4_2 c m|P4_2cm||C4v^3
102|P 4n -2n|P 4_2 n m|P 4_2 n m|P4_2nm||C4v^4
103|P 4 -2c|P 4 c c|P 4 c c|P4cc||C4v^5
104|P 4 -2n|P 4 n c|P 4 n c|P4nc||C4v^6
105|P 4c -2|P 4_2 m c|P 4_2 m c|P4_2mc||C4v^7
106|P 4c -2ab|P 4_2 b c|P 4_2 b c|P4_2bc||C4v^8
107|I 4 -2|I 4 m m|I 4 m m|I4mm||C4v^9
108|I 4 -2c|I 4 c m|I 4 c m|I4cm||C4v^10
109|I 4bw -2|I 4_1 m d|I 4_1 m d|I4_1md||C4v^11
110|I 4bw -2c|I 4_1 c d|I 4_1 c d|I4_1cd||C4v^12
111|P -4 2|P -4 2 m|P -4 2 m|P-42m||D2d^1
112|P -4 2c|P -4 2 c|P -4 2 c|P-42c||D2d^2
113|P -4 2ab|P -4 2_1 m|P -4 2_1 m|P-42_1m||D2d^3
114|P -4 2n|P -4 2_1 c|P -4 2_1 c|P-42_1c||D2d^4
115|P -4 -2|P -4 m 2|P -4 m 2|P-4m2||D2d^5
116|P -4 -2c|P -4 c 2|P -4 c 2|P-4c2||D2d^6
117|P -4 -2ab|P -4 b 2|P -4 b 2|P-4b2||D2d^7
118|P -4 -2n|P -4 n 2|P -4 n 2|P-4n2||D2d^8
119|I -4 -2|I -4 m 2|I -4 m 2|I-4m2||D2d^9
120|I -4 -2c|I -4 c 2|I -4 c 2|I-4c2||D2d^10
121|I -4 2|I -4 2 m|I -4 2 m|I-42m||D2d^11
122|I -4 2bw|I -4 2 d|I -4 2 d|I-42d||D2d^12
123|-P 4 2|P 4/m m m|P 4/m 2/m 2/m|P4/mmm||D4h^1
124|-P 4 2c|P 4/m c c|P 4/m 2/c 2/c|P4/mcc||D4h^2
125|P 4 2 -1ab|P 4/n b m|P 4/n 2/b 2/m|P4/nbm|1|D4h^3
125|-P 4a 2b|P 4/n b m|P 4/n 2/b 2/m|P4/nbm|2|D4h^3
126|P 4 2 -1n|P 4/n n c|P 4/n 2/n 2/c|P4/nnc|1|D4h^4
126|-P 4a 2bc|P 4/n n c|P 4/n 2/n 2/c|P4/nnc|2|D4h^4
127|-P 4 2ab|P 4/m b m|P 4/m 2_1/b m|P4/mbm||D4h^5
128|-P 4 2n|P 4/m n c|P 4/m 2_1/n c|P4/mnc||D4h^6
129|P 4ab 2ab -1ab|P 4/n m m|P 4/n 2_1/m m|P4/nmm|1|D4h^7
129|-P 4a 2a|P 4/n m m|P 4/n 2_1/m m|P4/nmm|2|D4h^7
130|P 4ab 2n -1ab|P 4/n c c|P 4/n 2_1/c c|P4/ncc|1|D4h^8
130|-P 4a 2ac|P 4/n c c|P 4/n 2_1/c c|P4/ncc|2|D4h^8
131|-P 4c 2|P 4_2/m m c|P 4_2/m 2/m 2/c|P4_2/mmc||D4h^9
132|-P 4c 2c|P 4_2/m c m|P 4_2/m 2/c 2/m|P4_2/mcm||D4h^10
133|P 4n 2c -1n|P 4_2/n b c|P 4_2/n 2/b 2/c|P4_2/nbc|1|D4h^11
133|-P 4ac 2b|P 4_2/n b c|P 4_2/n 2/b 2/c|P4_2/nbc|2|D4h^11
134|P 4n 2 -1n|P 4_2/n n m|P 4_2/n 2/n 2/m|P4_2/nnm|1|D4h^12
134|-P 4ac 2bc|P 4_2/n n m|P 4_2/n 2/n 2/m|P4_2/nnm|2|D4h^12
135|-P 4c 2ab|P 4_2/m b c|P 4_2/m 2_1/b 2/c|P4_2/mbc||D4h^13
136|-P 4n 2n|P 4_2/m n m|P 4_2/m 2_1/n 2/m|P4_2/mnm||D4h^14
137|P 4n 2n -1n|P 4_2/n m c|P 4_2/n 2_1/m 2/c|P4_2/nmc|1|D4h^15
137|-P 4ac 2a|P 4_2/n m c|P 4_2/n 2_1/m 2/c|P4_2/nmc|2|D4h^15
138|P 4n 2ab -1n|P 4_2/n c m|P 4_2/n 2_1/c 2/m|P4_2/ncm|1|D4h^16
138|-P 4ac 2ac|P 4_2/n c m|P 4_2/n 2_1/c 2/m|P4_2/ncm|2|D4h^16
139|-I 4 2|I 4/m m m|I 4/m 2/m 2/m|I4/mmm||D4h^17
140|-I 4 2c|I 4/m c m|I 4/m 2/c 2/m|I4/mcm||D4h^18
141|I 4bw 2bw -1bw|I 4_1/a m d|I 4_1/a 2/m 2/d|I4_1/amd|1|D4h^19
141|-I 4bd 2|I 4_1/a m d|I 4_1/a 2/m 2/d|I4_1/amd|2|D4h^19
142|I 4bw 2aw -1bw|I 4_1/a c d|I 4_1/a 2/c 2/d|I4_1/acd|1|D4h^20
142|-I 4bd 2c|I 4_1/a c d|I 4_1/a 2/c 2/d|I4_1/acd|2|D4h^20
143|P 3|P 3|P 3|P3||C3^1
144|P 31|P 3_1|P 3_1|P3_1||C3^2
145|P 32|P 3_2|P 3_2|P3_2||C3^3
146|R 3|R 3|R 3|R3|H|C3^4
146|P 3*|R 3|R 3|R3|R|C3^4
147|-P 3|P -3|P -3|P-3||C3i^1
148|-R 3|R -3|R -3|R-3|H|C3i^2
148|-P 3*|R -3|R -3|R-3|R|C3i^2
149|P 3 2|P 3 1 2|P 3 1 2|P312||D3^1
150|P 3 2"|P 3 2 1|P 3 2 1|P321||D3^2
151|P 31 2 (0 0 4)|P 3_1 1 2|P 3_1 1 2|P3_112||D3^3
152|P 31 2"|P 3_1 2 1|P 3_1 2 1|P3_121||D3^4
153|P 32 2 (0 0 2)|P 3_2 1 2|P 3_2 1 2|P3_212||D3^5
154|P 32 2"|P 3_2 2 1|P 3_2 2 1|P3_221||D3^6
155|R 3 2"|R 3 2|R 3 2|R32|H|D3^7
155|P 3* 2|R 3 2|R 3 2|R32|R|D3^7
156|P 3 -2"|P 3 m 1|P 3 m 1|P3m1||C3v^1
157|P 3 -2|P 3 1 m|P 3 1 m|P31m||C3v^2
158|P 3 -2"c|P 3 c 1|P 3 c 1|P3c1||C3v^3
159|P 3 -2c|P 3 1 c|P 3 1 c|P31c||C3v^4
160|R 3 -2"|R 3 m|R 3 m|R3m|H|C3v^5
160|P 3* -2|R 3 m|R 3 m|R3m|R|C3v^5
161|R 3 -2"c|R 3 c|R 3 c|R3c|H|C3v^6
161|P 3* -2n|R 3 c|R 3 c|R3c|R|C3v^6
162|-P 3 2|P -3 1 m|P -3 1 2/m|P-31m||D3d^1
163|-P 3 2c|P -3 1 c|P -3 1 2/c|P-31c||D3d^2
164|-P 3 2"|P -3 m 1|P -3 2/m 1|P-3m1||D3d^3
165|-P 3 2"c|P -3 c 1|P -3 2/c 1|P-3c1||D3d^4
166|-R 3 2"|R -3 m|R -3 2/m|R-3m|H|D3d^5
166|-P 3* 2|R -3 m|R -3 2/m|R-3m|R|D3d^5
167|-R 3 2"c|R -3 c|R -3 2/c|R-3c|H|D3d^6
167|-P 3* 2n|R -3 c|R -3 2/c|R-3c|R|D3d^6
168|P 6|P 6|P 6|P6||C6^1
169|P 61|P 6_1|P 6_1|P6_1||C6^2
170|P 65|P 6_5|P 6_5|P6_5||C6^3
171|P 62|P 6_2|P 6_2|P6_2||C6^4
172|P 64|P 6_4|P 6_4|P6_4||C6^5
173|P 6c|P 6_3|P 6_3|P6_3||C6^6
174|P -6|P -6|P -6|P-6||C3h^1
175|-P 6|P 6/m|P 6/m|P6/m||C6h^1
176|-P 6c|P 6_3/m|P 6_3/m|P6_3/m||C6h^2
177|P 6 2|P 6 2 2|P 6 2 2|P622||D6^1
178|P 61 2 (0 0 5)|P 6_1 2 2|P 6_1 2 2|P6_122||D6^2
179|P 65 2 (0 0 1)|P 6_5 2 2|P 6_5 2 2|P6_522||D6^3
180|P 62 2 (0 0 4)|P 6_2 2 2|P 6_2 2 2|P6_222||D6^4
181|P 64 2 (0 0 2)|P 6_4 2 2|P 6_4 2 2|P6_422||D6^5
182|P 6c 2c|P 6_3 2 2|P 6_3 2 2|P6_322||D6^6
183|P 6 -2|P 6 m m|P 6 m m|P6mm||C6v^1
184|P 6 -2c|P 6 c c|P 6 c c|P6cc||C6v^2
185|P 6c -2|P 6_3 c m|P 6_3 c m|P6_3cm||C6v^3
186|P 6c -2c|P 6_3 m c|P 6_3 m c|P6_3mc||C6v^4
187|P -6 2|P -6 m 2|P -6 m 2|P-6m2||D3h^1
188|P -6c 2|P -6 c 2|P -6 c 2|P-6c2||D3h^2
189|P -6 -2|P -6 2 m|P -6 2 m|P-62m||D3h^3
190|P -6c -2c|P -6 2 c|P -6 2 c|P-62c||D3h^4
191|-P 6 2|P 6/m m m|P 6/m 2/m 2/m|P6/mmm||D6h^1
192|-P 6 2c|P 6/m c c|P 6/m 2/c 2/c|P6/mcc||D6h^2
193|-P 6c 2|P 6_3/m c m|P 6_3/m 2/c 2/m|P6_3/mcm||D6h^3
194|-P 6c 2c|P 6_3/m m c|P 6_3/m 2/m 2/c|P6_3/mmc||D6h^4
195|P 2 2 3|P 2 3|P 2 3|P23||T^1
196|F 2 2 3|F 2 3|F 2 3|F23||T^2
197|I 2 2 3|I 2 3|I 2 3|I23||T^3
198|P 2ac 2ab 3|P 2_1 3|P 2_1 3|P2_13||T^4
199|I 2b 2c 3|I 2_1 3|I 2_1 3|I2_13||T^5
200|-P 2 2 3|P m -3|P 2/m -3|Pm-3||Th^1
201|P 2 2 3 -1n|P n -3|P 2/n -3|Pn-3|1|Th^2
201|-P 2ab 2bc 3|P n -3|P 2/n -3|Pn-3|2|Th^2
202|-F 2 2 3|F m -3|F 2/m -3|Fm-3||Th^3
203|F 2 2 3 -1d|F d -3|F 2/d -3|Fd-3|1|Th^4
203|-F 2uv 2vw 3|F d -3|F 2/d -3|Fd-3|2|Th^4
204|-I 2 2 3|I m -3|I 2/m -3|Im-3||Th^5
205|-P 2ac 2ab 3|P a -3|P 2_1/a -3|Pa-3||Th^6
206|-I 2b 2c 3|I a -3|I 2_1/a -3|Ia-3||Th^7
207|P 4 2 3|P 4 3 2|P 4 3 2|P432||O^1
208|P 4n 2 3|P 4_2 3 2|P 4_2 3 2|P4_232||O^2
209|F 4 2 3|F 4 3 2|F 4 3 2|F432||O^3
210|F 4d 2 3|F 4_1 3 2|F 4_1 3 2|F4_132||O^4
211|I 4 2 3|I 4 3 2|I 4 3 2|I432||O^5
212|P 4acd 2ab 3|P 4_3 3 2|P 4_3 3 2|P4_332||O^6
213|P 4bd 2ab 3|P 4_1 3 2|P 4_1 3 2|P4_132||O^7
214|I 4bd 2c 3|I 4_1 3 2|I 4_1 3 2|I4_132||O^8
215|P -4 2 3|P -4 3 m|P -4 3 m|P-43m||Td^1
216|F -4 2 3|F -4 3 m|F -4 3 m|F-43m||Td^2
217|I -4 2 3|I -4 3 m|I -4 3 m|I-43m||Td^3
218|P -4n 2 3|P -4 3 n|P -4 3 n|P-43n||Td^4
219|F -4a 2 3|F -4 3 c|F -4 3 c|F-43c||Td^5
220|I -4bd 2c 3|I -4 3 d|I -4 3 d|I-43d||Td^6
221|-P 4 2 3|P m -3 m|P 4/m -3 2/m|Pm-3m||Oh^1
222|P 4 2 3 -1n|P n -3 n|P 4/n -3 2/n|Pn-3n|1|Oh^2
222|-P 4a 2bc 3|P n -3 n|P 4/n -3 2/n|Pn-3n|2|Oh^2
223|-P 4n 2 3|P m -3 n|P 4_2/m -3 2/n|Pm-3n||Oh^3
224|P 4n 2 3 -1n|P n -3 m|P 4_2/n -3 2/m|Pn-3m|1|Oh^4
224|-P 4bc 2bc 3|P n -3 m|P 4_2/n -3 2/m|Pn-3m|2|Oh^4
225|-F 4 2 3|F m -3 m|F 4/m -3 2/m|Fm-3m||Oh^5
226|-F 4a 2 3|F m -3 c|F 4/m -3 2/c|Fm-3c||Oh^6
227|F 4d 2 3 -1d|F d -3 m|F 4_1/d -3 2/m|Fd-3m|1|Oh^7
227|-F 4vw 2vw 3|F d -3 m|F 4_1/d -3 2/m|Fd-3m|2|Oh^7
228|F 4d 2 3 -1ad|F d -3 c|F 4_1/d -3 2/c|Fd-3c|1|Oh^8
228|-F 4ud 2vw 3|F d -3 c|F 4_1/d -3 2/c|Fd-3c|2|Oh^8
229|-I 4 2 3|I m -3 m|I 4/m -3 2/m|Im-3m||Oh^9
230|-I 4bd 2c 3|I a -3 d|I 4_1/a -3 2/d|Ia-3d||Oh^10
`
