"""The command line's own tasks beside serving: doctor, install hints, the savings bench and traces."""
