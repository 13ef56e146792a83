# regraft: path trl/trainer/dpo_trainer.py
from datasets import Dataset


class DPOTrainer(Trainer):
    def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
        map_kwargs = {}
        # Tokenize the dataset
        if isinstance(dataset, Dataset):  # `IterableDataset.map` does not support `desc`
            map_kwargs["desc"] = f"Tokenizing {dataset_name} dataset"

        dataset = dataset.map(
            self.tokenize_row if not self.is_vision_model else dpo_trainer_vision_process_row,
            **map_kwargs,
        )
        return dataset
