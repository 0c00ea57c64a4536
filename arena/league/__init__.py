"""Leagues: a configuration (config, from a file and flags: settings) is checked and planned
into bots and matches (plan, schedule), played by workers on this machine or on Ray (workers,
ray_pool) and kept match by match in one SQLite file (store); lifecycle opens (starts or
resumes) and runs a league, ab_test is the kind of league the SPRT stops, merge reads several
leagues as one."""
