#!/usr/bin/python3
"""Trains the bundled example: a small CNN on scikit-learn's 8x8 digits, exported to ONNX.

Writes digits.onnx (batch dimension symbolic, "N"), samples.npy (eight held-out digits,
N x 1 x 8 x 8 float32, pixels scaled to [0, 1]) and labels.npy (their true labels). Fixed seeds:
rerunning gives the same model. The outputs are committed; this script documents how they
were made: /usr/bin/python3 examples/digits/train_digits.py
"""
import os

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

here = os.path.dirname(os.path.abspath(__file__))


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    torch.manual_seed(0)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    for epoch in range(30):
        perm = torch.randperm(len(xt))
        for i in range(0, len(xt), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(torch.from_numpy(x_test)).argmax(1).numpy() == y_test).mean()
    print(f"test accuracy on {len(y_test)} held-out digits: {accuracy:.3f}")
    torch.onnx.export(model, (torch.from_numpy(x_test[:1]),), os.path.join(here, "digits.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"], dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
    np.save(os.path.join(here, "samples.npy"), x_test[:8])
    np.save(os.path.join(here, "labels.npy"), y_test[:8])


if __name__ == "__main__":
    main()
