from engine.builders import build_network
