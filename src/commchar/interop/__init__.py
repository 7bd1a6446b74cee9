"""Numbers in and out of the peer tools: OSU and IMB text output read into points
(osu.py, imb.py, importer.py), and a fitted model written as SimGrid/SMPI and
LogGOPSim parameters (simgrid.py, loggopsim.py)."""
