"""Geo commands against Debian's redis-server 7.0: scores, positions, hashes,
distances and searches (their membership, order, COUNT/ANY cut-off and STORE
results) must be Redis' exactly."""
import random

import pytest


def test_geoadd_pos_dist_hash(diff):
    diff.run("""
    GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
    GEOADD g 13.361389 38.115556 Palermo
    GEOADD g CH 13.361390 38.115556 Palermo 2.349014 48.864716 Paris
    GEOADD g NX 0 0 Palermo 1 1 Null
    GEOADD g XX CH 1 2 Null 3 4 Palermo
    GEOADD g XX NX 1 1 a
    GEOADD g 1 1
    GEOADD g NX CH 1 1
    GEOADD g 200 10 bad
    GEOADD g 10 86 bad
    GEOADD g x 10 bad
    GEOADD g 10 nan bad
    GEOADD g 1 1 ok 10 100 bad
    ZRANGE g 0 -1 WITHSCORES
    GEOPOS g Palermo Catania nope
    GEOPOS g
    GEOPOS nokey a b
    GEODIST g Palermo Catania
    GEODIST g Palermo Catania km
    GEODIST g Palermo Catania MI
    GEODIST g Palermo Catania ft
    GEODIST g Palermo Catania parsec
    GEODIST g Palermo Catania km extra
    GEODIST g Palermo nope
    GEODIST nokey a b
    GEODIST nokey a b parsec
    GEODIST g Palermo Palermo
    GEOHASH g Palermo Catania Paris nope
    GEOHASH nokey a
    GEOHASH g
    GEOADD edge -180 -85.05112878 sw 180 85.05112878 ne 0 0 origin
    GEOPOS edge sw ne origin
    GEOHASH edge sw ne origin
    GEODIST edge sw ne
    SET s x
    GEOADD s 1 1 a
    GEOPOS s a
    GEOHASH s a
    GEODIST s a b
    GEOSEARCH s FROMLONLAT 0 0 BYRADIUS 1 km
    TYPE g
    OBJECT ENCODING g
    """)


def test_geosearch_argument_errors(diff):
    diff("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    diff.run("""
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS -1 km
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS x km
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 1 parsec
    GEOSEARCH g FROMLONLAT 15 37 BYBOX -1 1 km
    GEOSEARCH g FROMLONLAT 15 37 BYBOX x 1 km
    GEOSEARCH g FROMLONLAT 15 37 BYBOX 1 y km
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 100 km ANY
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 100 km COUNT 0
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 100 km COUNT -3
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 100 km COUNT x
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 100 km STORE d
    GEOSEARCH g FROMLONLAT 15 37 FROMMEMBER Palermo BYRADIUS 100 km
    GEOSEARCH g FROMMEMBER Palermo FROMLONLAT 15 37 BYRADIUS 100 km
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 100 km BYBOX 1 1 km
    GEOSEARCH g FROMLONLAT 15 37 WITHDIST ASC DESC
    geosearch g BYRADIUS 100 km WITHDIST ASC
    GEOSEARCH g FROMMEMBER nope BYRADIUS 100 km
    GEOSEARCH nokey FROMMEMBER nope BYRADIUS 100 km
    GEOSEARCH nokey FROMLONLAT 200 0 BYRADIUS 100 km
    GEOSEARCH g FROMLONLAT 200 0 BYRADIUS 100 km
    GEOSEARCH g FROMLONLAT 1e308 -1.7976931348623157e308 BYRADIUS 100 km
    GEOADD g 1 1e300 far
    GEORADIUS g -1e308 0 1 km
    GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 100 km WITHDIST
    GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 100 km STORE x
    GEORADIUS g 15 37 200 km STORE x WITHDIST
    GEORADIUS_RO g 15 37 200 km STORE x
    GEORADIUS g 15 37 200 km COUNT
    GEORADIUS g 15 37 200 km FROMLONLAT 1 1
    GEORADIUSBYMEMBER g nope 100 km
    GEORADIUSBYMEMBER nokey nope 100 km
    GEORADIUSBYMEMBER nokey nope x parsec WITHDIST
    GEORADIUSBYMEMBER nokey nope 100 km STORE d
    GEORADIUSBYMEMBER g Palermo -1 km
    GEORADIUSBYMEMBER_RO g Palermo 100 km STOREDIST d
    """)


def test_geo_search_results(diff):
    diff.run("""
    GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 edge1 17.241510 38.222245 edge2
    GEORADIUS g 15 37 200 km WITHDIST WITHCOORD ASC
    GEORADIUS g 15 37 200 km WITHDIST WITHCOORD WITHHASH DESC
    GEORADIUS g 15 37 200 km
    GEORADIUS g 15 37 200 km COUNT 1
    GEORADIUS g 15 37 200 km COUNT 1 DESC WITHDIST
    GEORADIUS_RO g 15 37 200 km WITHDIST ASC
    GEORADIUSBYMEMBER g Palermo 200 km WITHDIST ASC
    GEORADIUSBYMEMBER_RO g Palermo 200 km WITHDIST DESC
    GEOSEARCH g FROMMEMBER Palermo BYBOX 400 400 km ASC WITHDIST WITHHASH
    GEOSEARCH g FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHCOORD
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 200 km ASC
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 200 mi DESC WITHDIST
    GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 1 m
    GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km ASC
    ZRANGE d 0 -1 WITHSCORES
    GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km DESC COUNT 2 STOREDIST
    ZRANGE d 0 -1 WITHSCORES
    GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 1 m
    EXISTS d
    GEORADIUS g 15 37 200 km STORE d2
    ZRANGE d2 0 -1 WITHSCORES
    GEORADIUS g 15 37 200 km STOREDIST d2
    ZRANGE d2 0 -1 WITHSCORES
    GEORADIUSBYMEMBER g Palermo 100 km STORE d3
    ZRANGE d3 0 -1 WITHSCORES
    GEORADIUSBYMEMBER nokey x 100 km STORE d3
    EXISTS d3
    GEOSEARCHSTORE d4 nokey FROMLONLAT 15 37 BYRADIUS 200 km
    """)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_geo_random_searches(diff, seed):
    """Hundreds of random points around a few centers (incl. near the poles,
    the antimeridian and the equator); every search form is compared, sorted
    and unsorted (Redis' box-by-box order), with COUNT, ANY and in every unit."""
    rng = random.Random(seed)
    centers = [(0.0, 0.0), (13.4, 52.5), (-73.9, 40.7), (179.9, -16.5), (-179.8, 65.0), (25.0, 84.0),
               (151.2, -33.9), (-58.4, -34.6)]
    args = []
    for i in range(600):
        lon, lat = rng.choice(centers)
        lon = max(-180, min(180, lon + rng.uniform(-3, 3)))
        lat = max(-85, min(85, lat + rng.uniform(-2, 2)))
        args += [f"{lon:.6f}", f"{lat:.6f}", f"m{i}"]
    diff("GEOADD", "pts", *args)
    for _ in range(60):
        lon, lat = rng.choice(centers)
        lon = max(-180, min(180, lon + rng.uniform(-1, 1)))
        lat = max(-85, min(85, lat + rng.uniform(-1, 1)))
        unit = rng.choice(["m", "km", "mi", "ft"])
        scale = {"m": 1000, "km": 1, "mi": 0.62, "ft": 3280}[unit]
        r = f"{rng.uniform(1, 400) * scale:.3f}"
        w, h = f"{rng.uniform(1, 600) * scale:.3f}", f"{rng.uniform(1, 600) * scale:.3f}"
        lo, la = f"{lon:.5f}", f"{lat:.5f}"
        diff("GEOSEARCH", "pts", "FROMLONLAT", lo, la, "BYRADIUS", r, unit)
        diff("GEOSEARCH", "pts", "FROMLONLAT", lo, la, "BYRADIUS", r, unit, "ASC", "WITHDIST", "WITHHASH")
        diff("GEOSEARCH", "pts", "FROMLONLAT", lo, la, "BYBOX", w, h, unit, "WITHCOORD")
        diff("GEOSEARCH", "pts", "FROMLONLAT", lo, la, "BYBOX", w, h, unit, "DESC", "WITHDIST")
        diff("GEOSEARCH", "pts", "FROMLONLAT", lo, la, "BYRADIUS", r, unit, "COUNT", "3", "ANY")
        diff("GEOSEARCH", "pts", "FROMLONLAT", lo, la, "BYRADIUS", r, unit, "COUNT", "5", "ASC", "WITHDIST")
        m = f"m{rng.randrange(600)}"
        diff("GEORADIUSBYMEMBER", "pts", m, r, unit, "WITHDIST", "ASC")
        diff("GEORADIUS", "pts", lo, la, r, unit, "STOREDIST", "out")
        diff("ZRANGE", "out", "0", "-1", "WITHSCORES")
    diff("GEOPOS", "pts", *[f"m{i}" for i in range(0, 600, 7)])
    diff("GEOHASH", "pts", *[f"m{i}" for i in range(0, 600, 7)])
    diff("GEODIST", "pts", "m1", "m2", "km")
    diff("GEOSEARCH", "pts", "FROMLONLAT", "0", "0", "BYRADIUS", "20000", "km", "COUNT", "600", "ASC")
    diff("GEOSEARCH", "pts", "FROMLONLAT", "0", "0", "BYRADIUS", "6000", "km")
