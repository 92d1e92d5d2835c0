"""Datasets: the interface every image source implements, and real-data readers."""

from crsbench_lib.data.base import ImageDataset, ImageSplit, TaskType

__all__ = ["ImageDataset", "ImageSplit", "TaskType"]
