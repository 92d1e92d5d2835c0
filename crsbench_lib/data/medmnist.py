"""Reader of MedMNIST ``.npz`` files (Yang et al., 2023) into an :class:`ImageDataset`.

A MedMNIST file holds ``train_images``, ``train_labels``, ``val_images``,
``val_labels``, ``test_images`` and ``test_labels``; images are ``uint8``
``(N, H, W)`` (grey) or ``(N, H, W, 3)`` (RGB); labels are ``(N, 1)`` for
single-label tasks, ``(N, L)`` for multi-label tasks (ChestMNIST), and in some
circulating copies ``(N,)``.

File naming rule: a dataset folder ``root`` holds ``root/{flag}.npz`` at 28 px
and ``root/{flag}_{size}.npz`` at 64, 128 and 224 px (MedMNIST+), e.g.
``~/.medmnist/dermamnist.npz`` and ``~/.medmnist/dermamnist_224.npz``.

Nothing is downloaded unless ``download=True`` is passed explicitly (the
``crsbench run --allow-download`` flag or ``allow_download: true`` in a profile).
Files are read with ``allow_pickle=False``: a file that is not a NumPy archive
is refused, never unpickled.
"""

from __future__ import annotations

import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crsbench_lib.atomic import atomic_path
from crsbench_lib.data.base import SPLITS, ImageDataset, ImageSplit, TaskType
from crsbench_lib.errors import DataError
from crsbench_lib.hashing import file_sha256

SIZES: tuple[int, ...] = (28, 64, 128, 224)
# Zenodo record of MedMNIST v3 (MedMNIST+ sizes included).
DOWNLOAD_URL = "https://zenodo.org/records/10519652/files/{file}?download=1"
REQUIRED_KEYS: tuple[str, ...] = tuple(f"{s}_{k}" for s in SPLITS for k in ("images", "labels"))
NAMING_RULE = "root/{flag}.npz at 28 px, root/{flag}_{size}.npz at 64, 128 or 224 px"
DOWNLOAD_HINT = "pass --allow-download to crsbench run, or set allow_download: true in the profile"
# Errors numpy raises on a file that is not an .npz archive; their texts are not
# shown, since with allow_pickle=False numpy's text advises unsafe unpickling.
_UNREADABLE = (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError)


@dataclass(frozen=True)
class FlagInfo:
    """Task facts of one standard MedMNIST flag.

    Attributes
    ----------
    domain : str
        The corruption catalogue that suits the flag's images (a key of
        :data:`crsbench_lib.cohort.corruptions.SEVERITY_TABLE`).
    task : {"binary", "multiclass", "multilabel"}
    n_classes : int
        Classes (labels of a multi-label task).
    labels : tuple of str
        The published meaning of label ``k`` at index ``k`` (MedMNIST's
        ``INFO[flag]["label"]``, lower case); ``len(labels) == n_classes``.
    n_channels : {1, 3}
        Grey (1) or RGB (3) images.

    Examples
    --------
    >>> FLAGS["breastmnist"].labels
    ('malignant', 'normal or benign')
    """

    domain: str
    task: TaskType
    n_classes: int
    labels: tuple[str, ...]
    n_channels: int

    def __post_init__(self) -> None:
        if len(self.labels) != self.n_classes:  # a table typo, caught at import
            raise ValueError(f"FlagInfo: {len(self.labels)} class names for {self.n_classes} classes")


# Class names: MedMNIST v3's INFO (medmnist/info.py, "label"), lower case; the
# same in v2. Two are written out: ChestMNIST's "pleural" is ChestX-ray14's
# Pleural_Thickening, and RetinaMNIST's labels "0".."4" are DeepDRiD's five
# diabetic-retinopathy severity grades.
_ORGANS = ("bladder", "femur-left", "femur-right", "heart", "kidney-left", "kidney-right", "liver", "lung-left",
           "lung-right", "pancreas", "spleen")

#: The standard MedMNIST 2D flags. RetinaMNIST's ordinal grades are read as multi-class.
#: Each flag's domain names the corruption catalogue of its imaging modality (after MedMNIST-C).
FLAGS: dict[str, FlagInfo] = {
    # Colorectal H&E patches (NCT-CRC-HE-100K), bright-field slide scans.
    "pathmnist": FlagInfo("pathology", "multiclass", 9, (
        "adipose", "background", "debris", "lymphocytes", "mucus", "smooth muscle", "normal colon mucosa",
        "cancer-associated stroma", "colorectal adenocarcinoma epithelium"), 3),
    # Frontal chest radiographs (NIH ChestX-ray14).
    "chestmnist": FlagInfo("radiology", "multilabel", 14, (
        "atelectasis", "cardiomegaly", "effusion", "infiltration", "mass", "nodule", "pneumonia", "pneumothorax",
        "consolidation", "edema", "emphysema", "fibrosis", "pleural thickening", "hernia"), 1),
    # Dermatoscope photographs (HAM10000).
    "dermamnist": FlagInfo("dermatology", "multiclass", 7, (
        "actinic keratoses and intraepithelial carcinoma", "basal cell carcinoma", "benign keratosis-like lesions",
        "dermatofibroma", "melanoma", "melanocytic nevi", "vascular lesions"), 3),
    # Retinal OCT B-scans: speckle and depth, not the fundus camera's haze and illumination.
    "octmnist": FlagInfo("oct", "multiclass", 4, (
        "choroidal neovascularization", "diabetic macular edema", "drusen", "normal"), 1),
    # Paediatric chest radiographs.
    "pneumoniamnist": FlagInfo("radiology", "binary", 2, ("normal", "pneumonia"), 1),
    # Fundus camera photographs (DeepDRiD).
    "retinamnist": FlagInfo("ophthalmology", "multiclass", 5, (
        "dr grade 0", "dr grade 1", "dr grade 2", "dr grade 3", "dr grade 4"), 3),
    # Breast ultrasound (B-mode): speckle, gain and shadowing, not a chest film's grid lines and markers.
    "breastmnist": FlagInfo("ultrasound", "binary", 2, ("malignant", "normal or benign"), 1),
    # Romanowsky-stained peripheral blood smears, bright-field microscope camera.
    "bloodmnist": FlagInfo("microscopy", "multiclass", 8, (
        "basophil", "eosinophil", "erythroblast", "immature granulocytes", "lymphocyte", "monocyte", "neutrophil",
        "platelet"), 3),
    # DAPI-stained kidney-cortex nuclei (BBBC051), confocal fluorescence, grey: a microscope, not an H&E slide.
    "tissuemnist": FlagInfo("microscopy", "multiclass", 8, (
        "collecting duct, connecting tubule", "distal convoluted tubule", "glomerular endothelial cells",
        "interstitial endothelial cells", "leukocytes", "podocytes", "proximal tubule segments",
        "thick ascending limb"), 1),
    # Abdominal CT slices (LiTS) in an abdominal window: axial, coronal and sagittal.
    "organamnist": FlagInfo("ct", "multiclass", 11, _ORGANS, 1),
    "organcmnist": FlagInfo("ct", "multiclass", 11, _ORGANS, 1),
    "organsmnist": FlagInfo("ct", "multiclass", 11, _ORGANS, 1),
}


def medmnist_filename(flag: str, size: int = 28) -> str:
    """``{flag}.npz`` at 28 px, ``{flag}_{size}.npz`` otherwise."""
    if size not in SIZES:
        raise DataError(f"MedMNIST size must be one of {SIZES}, got {size}")
    return f"{flag}.npz" if size == 28 else f"{flag}_{size}.npz"


def medmnist_path(flag: str, root: Path, size: int = 28) -> Path:
    """Where the reader looks for a flag's file (see the module's naming rule).

    ``root`` may also name the file itself, if its name follows the rule.

    Raises
    ------
    DataError
        If ``root`` is a file whose name is not :func:`medmnist_filename`.

    Examples
    --------
    >>> medmnist_path("dermamnist", Path("/data"), 224).as_posix()
    '/data/dermamnist_224.npz'
    """
    root = Path(root)
    expected = medmnist_filename(flag, size)
    if root.is_file() or root.suffix == ".npz":
        if root.name == expected:
            return root
        raise DataError(
            f"{root}: root names a file, but a MedMNIST root is the folder holding {expected} "
            f"({NAMING_RULE}); set root to {root.parent} and name the file {expected}"
        )
    return root / expected


def download_medmnist(flag: str, root: Path, size: int = 28) -> Path:
    """Download one MedMNIST file into ``root`` (atomic write). Needs network access."""
    file = medmnist_filename(flag, size)
    dest = Path(root) / file
    url = DOWNLOAD_URL.format(file=file)
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, atomic_path(dest) as tmp:  # noqa: S310 - fixed https URL
            with open(tmp, "wb") as fh:
                for chunk in iter(lambda: resp.read(1 << 20), b""):
                    fh.write(chunk)
    except OSError as exc:
        raise DataError(f"could not download {url} to {dest}: {exc}") from exc
    return dest


def _labels(raw: np.ndarray, task: TaskType, path: Path, key: str) -> np.ndarray:
    if raw.ndim == 2 and raw.shape[1] == 1:
        raw = raw[:, 0]
    if raw.ndim not in (1, 2):
        raise DataError(f"{path}: {key} must be (N,), (N, 1) or (N, L), got shape {raw.shape}")
    if not np.issubdtype(raw.dtype, np.integer) and not np.all(np.mod(raw, 1) == 0):
        raise DataError(f"{path}: {key} must hold integer class labels")
    if task == "multilabel":
        if raw.ndim != 2 or not np.isin(raw, (0, 1)).all():
            raise DataError(f"{path}: {key} must be a 0/1 matrix (N, L) for a multi-label task")
        return raw.astype(np.uint8)
    if raw.ndim != 1:
        raise DataError(f"{path}: {key} has shape {raw.shape}, but the task is {task} (one label per image)")
    return raw.astype(np.int64)


def _images(raw: np.ndarray, path: Path, key: str) -> np.ndarray:
    if raw.ndim == 4 and raw.shape[-1] == 1:
        raw = raw[..., 0]
    if raw.dtype != np.uint8:
        raise DataError(f"{path}: {key} must be uint8, got {raw.dtype}")
    if raw.ndim not in (3, 4) or (raw.ndim == 4 and raw.shape[-1] != 3):
        raise DataError(f"{path}: {key} must be (N, H, W) or (N, H, W, 3), got {raw.shape}")
    return raw


def _infer_task(labels: np.ndarray) -> tuple[TaskType, int]:
    if labels.ndim == 2 and labels.shape[1] > 1:
        return "multilabel", int(labels.shape[1])
    n = int(labels.max()) + 1 if labels.size else 0
    return ("binary" if n <= 2 else "multiclass"), max(n, 2)


def _unreadable(path: Path, what: str) -> DataError:
    return DataError(
        f"{path}: {what} is not a readable NumPy .npz archive with keys {', '.join(REQUIRED_KEYS)}"
    )


def load_medmnist(
    flag: str,
    root: Path,
    size: int = 28,
    download: bool = False,
    domain: str | None = None,
    calibration_size: int | None = None,
) -> ImageDataset:
    """Read a MedMNIST ``.npz`` from a local folder.

    Parameters
    ----------
    flag : str
        MedMNIST flag (``dermamnist``, ``chestmnist``...). Flags outside
        :data:`FLAGS` are accepted; their task is inferred from the labels.
    root : pathlib.Path
        Folder holding the file (:func:`medmnist_filename`), or the file itself.
    size : {28, 64, 128, 224}
        Image side of the file.
    download : bool
        Download the file into ``root`` if it is absent (network access).
        Default ``False``: the reader never touches the network otherwise.
    domain : str, optional
        Imaging domain (``dermatology``, ``ophthalmology``, ``radiology``,
        ``ultrasound``, ``pathology``, ``microscopy``, ``ct``, ``oct``), which
        selects the corruption families. Default: the flag's domain in
        :data:`FLAGS`; required for any other flag.
    calibration_size : int, optional
        Calibration-split size of every seed's resample (default: the file's
        validation split size).

    Returns
    -------
    ImageDataset
        Name ``{flag}`` (``{flag}_{size}`` above 28 px), one site ``"A"``;
        version = sha256 of the file; class names: the flag's published
        labels (:attr:`FlagInfo.labels`), ``{flag}_{k}`` for another flag. The file's test split is the test split
        of every seed; seed ``s``'s train, validation and calibration splits are
        a stratified resample of the file's train and validation splits
        (:meth:`ImageDataset.development`), the source splits stay readable
        with :meth:`ImageDataset.source_split`.

    Raises
    ------
    DataError
        If the file is missing (and ``download`` is false), not a readable
        ``.npz``, lacks a key, holds malformed images or labels, or a split's
        image and label counts differ; or the flag is not standard and no
        ``domain`` is given.

    Examples
    --------
    >>> load_medmnist("dermamnist", Path("~/.medmnist").expanduser())  # doctest: +SKIP
    """
    path = medmnist_path(flag, root, size)
    info = FLAGS.get(flag)
    resolved_domain = domain if domain is not None else (info.domain if info is not None else None)
    if resolved_domain is None:
        raise DataError(
            f"MedMNIST flag {flag!r} is not a standard flag, so its domain is unknown: set the dataset's "
            f"domain key (e.g. domain: radiology), which selects the corruption families"
        )
    if not path.exists():
        if not download:
            raise DataError(f"{path}: MedMNIST file for flag {flag!r} not found ({NAMING_RULE}); {DOWNLOAD_HINT}")
        download_medmnist(flag, path.parent, size)
    try:
        with np.load(path, allow_pickle=False) as npz:
            keys = set(npz.files)
            missing = [k for k in REQUIRED_KEYS if k not in keys]
            if missing:
                raise DataError(f"{path}: missing key(s) {', '.join(missing)}")
            train_labels = np.asarray(npz["train_labels"])
    except DataError:
        raise
    except _UNREADABLE as exc:
        raise _unreadable(path, "the file") from exc
    if info is not None:
        task, n_classes = info.task, info.n_classes
    else:
        task, n_classes = _infer_task(train_labels[:, 0] if train_labels.ndim == 2 and train_labels.shape[1] == 1 else train_labels)
    version = file_sha256(path)

    def loader(split: str, site: str) -> ImageSplit:
        try:
            with np.load(path, allow_pickle=False) as npz:
                images = _images(np.asarray(npz[f"{split}_images"]), path, f"{split}_images")
                labels = _labels(np.asarray(npz[f"{split}_labels"]), task, path, f"{split}_labels")
        except DataError:
            raise
        except _UNREADABLE as exc:
            raise _unreadable(path, f"the {split} split") from exc
        if len(images) != len(labels):
            raise DataError(
                f"{path}: split {split}: {split}_images holds {len(images)} images but "
                f"{split}_labels holds {len(labels)} labels"
            )
        if task != "multilabel" and labels.size and (labels.min() < 0 or labels.max() >= n_classes):
            raise DataError(f"{path}: {split}_labels outside 0..{n_classes - 1}")
        if task == "multilabel" and labels.shape[1] != n_classes:
            raise DataError(f"{path}: {split}_labels has {labels.shape[1]} columns, expected {n_classes}")
        return ImageSplit(images=images, labels=labels, split=split, site=site)

    name = flag if size == 28 else f"{flag}_{size}"
    # A standard flag's classes by their published names; any other flag's by number.
    class_names = info.labels if info is not None else tuple(f"{flag}_{k}" for k in range(n_classes))
    return ImageDataset(name=name, domain=resolved_domain, task=task, class_names=class_names, version=version,
                        loader=loader, calibration_size=calibration_size)
