from model.segnet import SegNet


def build_network(args):
    return SegNet(args.classes)
