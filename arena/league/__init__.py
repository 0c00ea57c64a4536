"""Leagues: a configuration is checked (config), planned into matches (schedule), played by
workers on this machine or on Ray (workers, ray_pool) and kept match by match in one SQLite
file (store); lifecycle starts, resumes and closes a league, ab_test stops one by the SPRT."""
