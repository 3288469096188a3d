enum _PlaceholderScenario {}
