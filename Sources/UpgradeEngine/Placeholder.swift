enum _PlaceholderUpgradeEngine {}
