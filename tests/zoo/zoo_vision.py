"""Zoo entries from torchvision and timm (random weights, fixed seeds).

torchvision classification nets are built at their real structure (`weights=None`); the
input is 128 px unless the architecture needs a specific size (ViT-B/16 and MaxViT: 224,
Inception: 160).  timm models are built with `pretrained=False`.  `MODELS` holds the
architectures the zoo was specified with, `MORE` further ones (other families, attention
variants, mixers, re-parameterizable nets) so that coverage does not stop at the named list.
"""

from __future__ import annotations

import torch

from zoo_common import ZooModel, seeded


def _image(size: int, batch: int = 1, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 3, size, size, generator=g)


def _tv(fn: str, size: int = 128, batch: int = 1, out: str | None = None, **kw):
    """Builder for torchvision.models[.segmentation].<fn>(weights=None, **kw)."""
    def build():
        import torchvision
        seeded(0)
        mod = torchvision.models.segmentation if fn.startswith(("deeplab", "fcn", "lraspp")) \
            else torchvision.models
        model = getattr(mod, fn)(weights=None, **kw).eval()
        if out is not None:  # segmentation models return a dict; keep one tensor
            model = _DictOut(model, out)
        return model, (_image(size, batch),)
    return build


class _DictOut(torch.nn.Module):
    """forward(x) -> model(x)[key]: tensors in, tensors out."""

    def __init__(self, model, key):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, x):
        return self.model(x)[self.key]


class _LastFlow(torch.nn.Module):
    """RAFT returns one flow per refinement step; keep the last (what is used)."""

    def __init__(self, model, updates):
        super().__init__()
        self.model, self.updates = model, updates

    def forward(self, a, b):
        return self.model(a, b, num_flow_updates=self.updates)[-1]


def _raft():
    import torchvision
    seeded(0)
    model = torchvision.models.optical_flow.raft_small(weights=None).eval()
    return _LastFlow(model, 4), (_image(128, seed=1), _image(128, seed=2))


def _video(fn: str):
    import torchvision
    seeded(0)
    model = getattr(torchvision.models.video, fn)(weights=None).eval()
    g = torch.Generator().manual_seed(1)
    return model, (torch.randn(1, 3, 8, 64, 64, generator=g),)


def _timm(name: str, size: int = 128, batch: int = 1, **kw):
    def build():
        import timm
        seeded(0)
        model = timm.create_model(name, pretrained=False, **kw).eval()
        return model, (_image(size, batch),)
    return build


TV = "torchvision"
TIMM = "timm"

MODELS: list[ZooModel] = [
    ZooModel("resnet18", TV, _tv("resnet18", 224), fast=True, note="224 px"),
    ZooModel("resnet50", TV, _tv("resnet50", 128), note="128 px"),
    ZooModel("mobilenet_v2", TV, _tv("mobilenet_v2", 128), note="128 px"),
    ZooModel("mobilenet_v3_small", TV, _tv("mobilenet_v3_small", 128), fast=True,
             note="128 px"),
    ZooModel("mobilenet_v3_large", TV, _tv("mobilenet_v3_large", 128), note="128 px"),
    ZooModel("efficientnet_b0", TV, _tv("efficientnet_b0", 128), note="128 px"),
    ZooModel("regnet_y_400mf", TV, _tv("regnet_y_400mf", 128), note="128 px"),
    ZooModel("convnext_tiny", TV, _tv("convnext_tiny", 128), note="128 px"),
    ZooModel("vit_b_16", TV, _tv("vit_b_16", 224), note="224 px (fixed by the model)"),
    ZooModel("swin_t", TV, _tv("swin_t", 128), note="128 px"),
    ZooModel("densenet121", TV, _tv("densenet121", 128), note="128 px"),
    ZooModel("squeezenet1_1", TV, _tv("squeezenet1_1", 128), fast=True, note="128 px"),
    ZooModel("shufflenet_v2_x0_5", TV, _tv("shufflenet_v2_x0_5", 128), note="128 px"),
    ZooModel("mnasnet0_5", TV, _tv("mnasnet0_5", 128), note="128 px"),
    ZooModel("googlenet", TV, _tv("googlenet", 128, aux_logits=False, init_weights=True),
             note="128 px, no aux heads"),
    ZooModel("inception_v3", TV, _tv("inception_v3", 160, aux_logits=False, init_weights=True),
             note="160 px, no aux head"),
    ZooModel("vgg11", TV, _tv("vgg11", 128), note="128 px"),
    ZooModel("alexnet", TV, _tv("alexnet", 128), note="128 px"),
    ZooModel("deeplabv3_mobilenet_v3_large", TV,
             _tv("deeplabv3_mobilenet_v3_large", 128, out="out", weights_backbone=None,
                 num_classes=21), note="128 px, 21 classes, output 'out'"),
    ZooModel("lraspp_mobilenet_v3_large", TV,
             _tv("lraspp_mobilenet_v3_large", 128, out="out", weights_backbone=None,
                 num_classes=21), note="128 px, 21 classes, output 'out'"),
    # timm
    ZooModel("timm_resnet26d", TIMM, _timm("resnet26d", 128), note="128 px"),
    ZooModel("timm_mobilenetv3_large_100", TIMM, _timm("mobilenetv3_large_100", 128),
             note="128 px"),
    ZooModel("timm_efficientnet_b0", TIMM, _timm("efficientnet_b0", 128), note="128 px"),
    ZooModel("timm_convnext_atto", TIMM, _timm("convnext_atto", 128), fast=True,
             note="128 px"),
    ZooModel("timm_vit_tiny_patch16_224", TIMM, _timm("vit_tiny_patch16_224", 224),
             note="224 px"),
    ZooModel("timm_cspresnet50", TIMM, _timm("cspresnet50", 128), note="128 px"),
    ZooModel("timm_regnety_002", TIMM, _timm("regnety_002", 128), note="128 px"),
    ZooModel("timm_mobilevit_xxs", TIMM, _timm("mobilevit_xxs", 128), note="128 px"),
]

MORE: list[ZooModel] = [
    ZooModel("resnext50_32x4d", TV, _tv("resnext50_32x4d", 128), note="128 px, grouped conv"),
    ZooModel("efficientnet_v2_s", TV, _tv("efficientnet_v2_s", 128), note="128 px, fused MBConv"),
    ZooModel("regnet_x_400mf", TV, _tv("regnet_x_400mf", 128), note="128 px"),
    ZooModel("maxvit_t", TV, _tv("maxvit_t", 224), note="224 px (fixed), block/grid attention"),
    ZooModel("swin_v2_t", TV, _tv("swin_v2_t", 128), note="128 px, cosine attention, log-CPB"),
    ZooModel("fcn_resnet50", TV, _tv("fcn_resnet50", 128, out="out", weights_backbone=None,
                                     num_classes=21), note="128 px, dilated resnet50"),
    ZooModel("deeplabv3_resnet50", TV, _tv("deeplabv3_resnet50", 128, out="out",
                                           weights_backbone=None, num_classes=21),
             note="128 px, ASPP on dilated resnet50"),
    ZooModel("raft_small", TV, lambda: _raft(), note="2 x 128 px frames, 4 flow updates"),
    ZooModel("r3d_18", TV, lambda: _video("r3d_18"), note="8 frames x 64 px, 3D convs"),
    ZooModel("timm_deit_tiny_distilled", TIMM, _timm("deit_tiny_distilled_patch16_224", 224),
             note="224 px"),
    ZooModel("timm_levit_128s", TIMM, _timm("levit_128s", 224), note="224 px"),
    ZooModel("timm_efficientformer_l1", TIMM, _timm("efficientformer_l1", 224), note="224 px"),
    ZooModel("timm_mixer_s16_224", TIMM, _timm("mixer_s16_224", 224), note="224 px"),
    ZooModel("timm_dla34", TIMM, _timm("dla34", 128), note="128 px"),
    ZooModel("timm_hrnet_w18_small", TIMM, _timm("hrnet_w18_small", 128), note="128 px"),
    ZooModel("timm_ghostnet_100", TIMM, _timm("ghostnet_100", 128), note="128 px"),
    ZooModel("timm_repvgg_a0", TIMM, _timm("repvgg_a0", 128), note="128 px"),
    ZooModel("timm_rexnet_100", TIMM, _timm("rexnet_100", 128), note="128 px"),
    ZooModel("timm_nf_resnet26", TIMM, _timm("nf_resnet26", 128), note="128 px"),
    ZooModel("timm_dpn68", TIMM, _timm("dpn68", 128), note="128 px"),
    ZooModel("timm_xception41", TIMM, _timm("xception41", 128), note="128 px"),
    ZooModel("timm_res2net50_26w_4s", TIMM, _timm("res2net50_26w_4s", 128), note="128 px"),
    ZooModel("timm_edgenext_xx_small", TIMM, _timm("edgenext_xx_small", 128), note="128 px"),
    ZooModel("timm_fastvit_t8", TIMM, _timm("fastvit_t8", 128), note="128 px"),
    ZooModel("timm_mobileone_s0", TIMM, _timm("mobileone_s0", 128), note="128 px"),
    ZooModel("timm_ese_vovnet19b_dw", TIMM, _timm("ese_vovnet19b_dw", 128), note="128 px"),
    ZooModel("timm_hgnetv2_b0", TIMM, _timm("hgnetv2_b0", 128), note="128 px"),
    ZooModel("timm_eva02_tiny", TIMM, _timm("eva02_tiny_patch14_224", 224), note="224 px"),
    ZooModel("timm_coatnet_nano", TIMM, _timm("coatnet_nano_rw_224", 224), note="224 px"),
    ZooModel("timm_mobilenetv4_conv_small", TIMM, _timm("mobilenetv4_conv_small", 128),
             note="128 px"),
    ZooModel("timm_inception_v4", TIMM, _timm("inception_v4", 160), note="160 px"),
    ZooModel("timm_resnest14d", TIMM, _timm("resnest14d", 128), note="128 px"),
    ZooModel("timm_halonet26t", TIMM, _timm("halonet26t", 256), note="256 px"),
    ZooModel("timm_efficientvit_b0", TIMM, _timm("efficientvit_b0", 128), note="128 px"),
    ZooModel("timm_tiny_vit_5m", TIMM, _timm("tiny_vit_5m_224", 224), note="224 px"),
    ZooModel("timm_pvt_v2_b0", TIMM, _timm("pvt_v2_b0", 128), note="128 px"),
    ZooModel("timm_xcit_nano", TIMM, _timm("xcit_nano_12_p16_224", 224), note="224 px"),
    ZooModel("timm_sequencer2d_s", TIMM, _timm("sequencer2d_s", 128, img_size=128),
             note="128 px (img_size=128), 2D BiLSTM mixing"),
    ZooModel("timm_gmlp_s16", TIMM, _timm("gmlp_s16_224", 224), note="224 px"),
    ZooModel("timm_cait_xxs24", TIMM, _timm("cait_xxs24_224", 224), note="224 px"),
    ZooModel("timm_mvitv2_tiny", TIMM, _timm("mvitv2_tiny", 128, img_size=128),
             note="128 px (img_size=128), pooling attention"),
    ZooModel("timm_vit_relpos_small", TIMM, _timm("vit_relpos_small_patch16_224", 224),
             note="224 px"),
    ZooModel("timm_hiera_tiny", TIMM, _timm("hiera_tiny_224", 224), note="224 px"),
    ZooModel("timm_repvit_m0_9", TIMM, _timm("repvit_m0_9", 128), note="128 px"),
    ZooModel("timm_efficientvit_m0", TIMM, _timm("efficientvit_m0", 224), note="224 px"),
    ZooModel("timm_starnet_s1", TIMM, _timm("starnet_s1", 128), note="128 px"),
    ZooModel("timm_inception_next_tiny", TIMM, _timm("inception_next_tiny", 128),
             note="128 px"),
    ZooModel("timm_mambaout_femto", TIMM, _timm("mambaout_femto", 128), note="128 px"),
    ZooModel("timm_davit_tiny", TIMM, _timm("davit_tiny", 128), note="128 px"),
    ZooModel("timm_focalnet_tiny_srf", TIMM, _timm("focalnet_tiny_srf", 128), note="128 px"),
    ZooModel("timm_crossvit_tiny", TIMM, _timm("crossvit_tiny_240", 240), note="240 px"),
    ZooModel("timm_volo_d1", TIMM, _timm("volo_d1_224", 224), note="224 px"),
]
